import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A test hook for the crash-safety tests: named checkpoints in the pipeline (after each committed batch,
/// after each file's state, after the scope committed ahead of the rule stage, after each rule, after the
/// report, after the final commit).
///
/// Inert unless the environment asks for it, and then cheap (a counter per stage):
/// - `IAPGUARD_CRASH_AFTER=<stage>:<n>` sends SIGKILL to the process at the n-th checkpoint of `stage`
///   (`ingest`, `scope`, `rules`, `report`, `finish` or `any`), as `kill -9` would;
/// - `IAPGUARD_SIGNAL_AFTER=<stage>:<n>[:INT]` sends SIGTERM instead (SIGINT with `:INT`; a clean stop is
///   then expected);
/// - `IAPGUARD_CHECKPOINT_LOG=<file>` appends one line per checkpoint (`stage n`), so a test can count them.
///
/// Never set these in production.
public final class CrashPoint: @unchecked Sendable {
    /// The process-wide instance, configured from the environment.
    public static let shared = CrashPoint(environment: ProcessInfo.processInfo.environment)

    private struct Target {
        var stage: String
        var count: Int
        var signal: Int32
    }

    private let lock = NSLock()
    private var counts: [String: Int] = [:]
    private let targets: [Target]
    private let logPath: String?

    init(environment: [String: String]) {
        var targets: [Target] = []
        for (key, signal) in [("IAPGUARD_CRASH_AFTER", SIGKILL), ("IAPGUARD_SIGNAL_AFTER", SIGTERM)] {
            guard let value = environment[key] else { continue }
            let parts = value.split(separator: ":")
            let chosen = signal == SIGTERM && parts.count == 3 && parts[2] == "INT" ? SIGINT : signal
            if parts.count == 2 || (parts.count == 3 && chosen == SIGINT), let count = Int(parts[1]), count > 0 {
                targets.append(Target(stage: String(parts[0]), count: count, signal: chosen))
            }
        }
        self.targets = targets
        self.logPath = environment["IAPGUARD_CHECKPOINT_LOG"]
    }

    /// Whether any hook is configured.
    public var isActive: Bool { !targets.isEmpty || logPath != nil }

    /// Marks one checkpoint of `stage`.
    public func reached(_ stage: String) {
        guard isActive else { return }
        let (stageCount, anyCount) = lock.withLock { () -> (Int, Int) in
            counts[stage, default: 0] += 1
            counts["any", default: 0] += 1
            return (counts[stage] ?? 0, counts["any"] ?? 0)
        }
        if let logPath, let handle = FileHandle(forWritingAtPath: logPath) ?? Self.create(logPath) {
            handle.seekToEndOfFile()
            handle.write(Data("\(stage) \(stageCount)\n".utf8))
            try? handle.close()
        }
        for target in targets
        where (target.stage == stage && target.count == stageCount)
            || (target.stage == "any" && target.count == anyCount)
        {
            kill(getpid(), target.signal)
            if target.signal != SIGKILL { usleep(50_000) }  // let the handler set the stop flag
        }
    }

    private static func create(_ path: String) -> FileHandle? {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        return FileHandle(forWritingAtPath: path)
    }
}
