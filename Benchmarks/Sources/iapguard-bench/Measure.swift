import Dispatch
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Timing, memory and printing shared by every stage.
enum Measure {
    /// Seconds taken by `body`, with its result.
    static func time<T>(_ body: () throws -> T) rethrows -> (T, Double) {
        let start = DispatchTime.now().uptimeNanoseconds
        let result = try body()
        return (result, Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }

    /// Peak resident set size of this process so far, in bytes (`getrusage` `ru_maxrss`, KiB on Linux).
    static func peakRSS() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Int(usage.ru_maxrss) * 1024
    }

    /// Peak RSS of the largest waited-for child process so far, in bytes.
    static func childrenPeakRSS() -> Int {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage)
        return Int(usage.ru_maxrss) * 1024
    }

    /// A counter of `/proc/self/io` (`write_bytes`: bytes this process caused to be written to storage,
    /// counted when it dirties the pages; `cancelled_write_bytes`: dirty bytes dropped before writeback, e.g.
    /// of a truncated WAL); `nil` where unreadable.
    static func ioCounter(_ name: String) -> Int? {
        guard let io = try? String(contentsOfFile: "/proc/self/io", encoding: .utf8),
            let line = io.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") })
        else { return nil }
        return Int(line.split(separator: " ").last ?? "")
    }

    /// The 1-, 5- and 15-minute load averages (the machine is shared: figures are noisy).
    static func loadAverage() -> String {
        (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?
            .split(separator: " ").prefix(3).joined(separator: " ") ?? "?"
    }

    /// Current resident size (`VmRSS` of `/proc/self/status`), in bytes; 0 where unreadable.
    static func currentRSS() -> Int { statusBytes("VmRSS:") }

    /// A size field of `/proc/self/status` (given in kB there), in bytes; 0 where unreadable.
    private static func statusBytes(_ field: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix(field) }),
            let kib = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kib * 1024
    }

    /// Resets the kernel's resident high-water mark (`VmHWM`) so the next `windowPeakRSS()` covers only
    /// what runs after this call. It resets `getrusage`'s `ru_maxrss` too: keep an earlier peak before
    /// calling. False where `/proc/self/clear_refs` is not writable (not Linux, or a kernel before 4.0).
    @discardableResult
    static func resetPeakRSS() -> Bool {
        guard let handle = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return false }
        defer { try? handle.close() }
        do {
            try handle.write(contentsOf: Data("5".utf8))
            return true
        } catch {
            return false
        }
    }

    /// Peak RSS since the last `resetPeakRSS()` (or since the process started), in bytes; 0 if unknown.
    static func windowPeakRSS() -> Int { statusBytes("VmHWM:") }

    static func mib(_ bytes: Int) -> String { String(format: "%.0f MiB", Double(bytes) / 1_048_576) }

    static func rate(_ count: Double, _ seconds: Double) -> String {
        let perSecond = seconds > 0 ? count / seconds : 0
        if perSecond >= 1e6 { return String(format: "%.2f M/s", perSecond / 1e6) }
        if perSecond >= 1e3 { return String(format: "%.1f k/s", perSecond / 1e3) }
        return String(format: "%.1f /s", perSecond)
    }

    static func ratio(_ value: Double, _ floor: Double) -> String {
        floor > 0 ? String(format: "×%.2f", value / floor) : "×?"
    }

    /// Prints one aligned result line: `stage  name  figures…`.
    static func line(_ stage: String, _ name: String, _ figures: String) {
        let paddedStage = stage.padding(toLength: 8, withPad: " ", startingAt: 0)
        let paddedName = name.count < 58 ? name.padding(toLength: 58, withPad: " ", startingAt: 0) : name + " "
        print("\(paddedStage)\(paddedName)\(figures)")
        fflush(nil)
    }

    static func header(_ stage: String, _ text: String) {
        print("== \(stage): \(text) (load \(loadAverage()), \(ProcessInfo.processInfo.activeProcessorCount) cores)")
        fflush(nil)
    }

    /// Runs `body` on `threads` threads at once; returns the seconds until all finished.
    static func parallel(threads: Int, _ body: @escaping @Sendable (Int) -> Void) -> Double {
        let (_, seconds) = time {
            DispatchQueue.concurrentPerform(iterations: threads) { body($0) }
        }
        return seconds
    }
}

/// A failed benchmark precondition.
struct BenchError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
    init(_ message: String) { self.message = message }
}
