import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A one-line progress display for long stages: count, rate and (when the total is known) percentage and
/// ETA, redrawn in place on stderr at most a few times a second.
///
/// It only draws when stderr is a terminal, and only once a stage has run for `delay` seconds, so short
/// runs and logs captured by cron or journald never see it.
public final class ProgressMeter: @unchecked Sendable {
    private let lock = NSLock()
    private let enabled: Bool
    private let delay: Double
    private let write: (String) -> Void
    private var stage = ""
    private var unit = ""
    private var total: Int?
    private var done = 0
    private var started = 0.0
    private var lastDraw = 0.0
    private var drawn = false

    /// `enabled: nil` draws when stderr is a terminal.
    public init(enabled: Bool? = nil, delay: Double = 2, write: ((String) -> Void)? = nil) {
        self.enabled = enabled ?? (isatty(STDERR_FILENO) == 1)
        self.delay = delay
        self.write = write ?? { FileHandle.standardError.write(Data($0.utf8)) }
    }

    /// A meter that never draws.
    public static let silent = ProgressMeter(enabled: false)

    private static func seconds() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// Starts a stage (`ingest orders`, `rules`) counting `unit`s, out of `total` when known.
    public func begin(_ stage: String, unit: String, total: Int? = nil) {
        lock.withLock {
            clearLocked()
            self.stage = stage
            self.unit = unit
            self.total = total
            done = 0
            started = Self.seconds()
            lastDraw = 0
        }
    }

    /// Adds `count` finished units and redraws if due.
    public func advance(by count: Int = 1) {
        lock.withLock {
            done += count
            guard enabled else { return }
            let now = Self.seconds()
            guard now - started >= delay, now - lastDraw >= 0.25 else { return }
            lastDraw = now
            write("\r\u{1B}[2K" + Self.line(stage: stage, unit: unit, done: done, total: total, elapsed: now - started))
            drawn = true
        }
    }

    /// Ends the stage and clears the line.
    public func end() { lock.withLock { clearLocked() } }

    private func clearLocked() {
        if drawn { write("\r\u{1B}[2K") }
        drawn = false
    }

    /// The text of one progress line: `rules 12/20 (60%) · 3.1 rules/s · ETA 0:03`.
    static func line(stage: String, unit: String, done: Int, total: Int?, elapsed: Double) -> String {
        let rate = elapsed > 0 ? Double(done) / elapsed : 0
        var text = "\(stage) \(done)"
        if let total, total > 0 {
            text += "/\(total) (\(min(100, done * 100 / total))%)"
        }
        text += " · " + (rate >= 10 ? String(Int(rate.rounded())) : String(format: "%.1f", rate)) + " \(unit)/s"
        if let total, total > done, rate > 0 {
            let remaining = Int((Double(total - done) / rate).rounded())
            text += " · ETA \(remaining / 60):" + String(format: "%02d", remaining % 60)
        }
        return text
    }
}
