import Foundation

@testable import IAPGuard
@testable import IAPGuardSampleWorld

#if canImport(Glibc)
    import Glibc
#endif

/// A small generated world (WorldGenerator, ~100 users, a few days) in a temporary folder, run by the
/// built `iapguard` binary as a subprocess so that it can be killed for real.
struct PipelineTestWorld {
    /// The world's end, used as `--until` (the window every run re-evaluates).
    static let until = "2026-11-01T00:00:00Z"

    let directory: URL

    var configPath: String { directory.appendingPathComponent("iapguard.yml").path }
    var storePath: String { directory.appendingPathComponent("state/iapguard.sqlite").path }
    var reportsDirectory: URL { directory.appendingPathComponent("reports") }

    /// The `iapguard` executable next to the test bundle (`.build/debug/iapguard`), if built.
    static let binary: URL? = {
        var candidates: [URL] = []
        let bundle = Bundle.main.bundleURL
        candidates.append(bundle.deletingLastPathComponent().appendingPathComponent("iapguard"))
        candidates.append(bundle.appendingPathComponent("iapguard"))
        for argument in CommandLine.arguments.prefix(1) {
            candidates.append(
                URL(fileURLWithPath: argument).deletingLastPathComponent().appendingPathComponent("iapguard"))
        }
        candidates.append(Fixtures.repoRoot.appendingPathComponent(".build/debug/iapguard"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// A pristine generated world, written once per process and copied for each test.
    static let template: Result<URL, any Error> = Result {
        let directory = TestScratch.root.appendingPathComponent(
            "iapguard-pipeline-template-\(UUID().uuidString)")
        let options = WorldGenerator.Options(
            seed: 7, users: 100, days: 5, end: WorldGenerator.defaultEnd,
            rulesPath: Fixtures.repoRoot.appendingPathComponent("rules").path)
        _ = try WorldGenerator(options: options).write(to: directory)
        return directory
    }

    /// A fresh copy of the template world.
    init() throws {
        directory = TestScratch.root.appendingPathComponent(
            "iapguard-pipeline-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: try Self.template.get(), to: directory)
        for leftover in ["state", "reports"] {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(leftover))
        }
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }

    /// What a finished subprocess did.
    struct Outcome {
        var status: Int32
        /// True when the process was ended by a signal (`status` is then the signal number).
        var signaled: Bool
        var stdout: String
        var stderr: String
    }

    /// Runs `iapguard run` on this world with `extra` arguments and environment.
    func run(
        _ extra: [String] = [], environment: [String: String] = [:], currentDirectory: URL? = nil,
        timeout: TimeInterval = 120
    ) throws -> Outcome {
        guard let binary = Self.binary else { throw RunError.noBinary }
        let process = Process()
        process.executableURL = binary
        if let currentDirectory { process.currentDirectoryURL = currentDirectory }
        process.arguments =
            ["run", "--config", configPath, "--until", Self.until, "--fail-on", "none", "--log-format", "json"] + extra
        var env = ProcessInfo.processInfo.environment
        for key in env.keys where key.hasPrefix("IAPGUARD_") { env[key] = nil }
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let out = directory.appendingPathComponent("stdout-\(UUID().uuidString).txt")
        let err = directory.appendingPathComponent("stderr-\(UUID().uuidString).txt")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let outHandle = try FileHandle(forWritingTo: out)
        let errHandle = try FileHandle(forWritingTo: err)
        process.standardOutput = outHandle
        process.standardError = errHandle
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning {
            if Date() > deadline {
                process.terminate()
                throw RunError.timeout
            }
            usleep(10_000)
        }
        try? outHandle.close()
        try? errHandle.close()
        defer {
            try? FileManager.default.removeItem(at: out)
            try? FileManager.default.removeItem(at: err)
        }
        return Outcome(
            status: process.terminationStatus, signaled: process.terminationReason == .uncaughtSignal,
            stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "")
    }

    /// Why a subprocess run could not happen: a failure of the test, never a skip.
    enum RunError: Error, CustomStringConvertible {
        case noBinary, timeout
        var description: String {
            switch self {
            case .noBinary:
                return "the iapguard binary is not built next to the tests (run `swift build --build-tests` first)"
            case .timeout: return "the iapguard subprocess did not finish in time"
            }
        }
    }

    /// Columns that name runs or hold wall-clock times: left out of the canonical dump.
    static let volatileColumns: Set<String> = [
        "first_run_id", "last_run_id", "last_seen_run_id", "run_id", "started_at", "finished_at", "query_millis",
    ]

    /// Every documented view except `runs`, rows as text without run ids and wall-clock columns, sorted.
    func canonicalDump() throws -> [String] {
        let database = try SQLiteDatabase(path: storePath, mode: .readOnly)
        var out: [String] = []
        for view in [
            "transactions", "sightings", "orders", "credits", "notifications", "refunds", "apps", "catalog",
            "testers", "fx_rates", "findings", "finding_history", "rule_runs",
        ] {
            var rows: [String] = []
            try database.query("SELECT * FROM \(view)", named: [:]) { columns, values in
                rows.append(
                    zip(columns, values).filter { !Self.volatileColumns.contains($0.0) }
                        .map { "\($0.0)=\($0.1.description)" }.joined(separator: "|"))
            }
            out.append("\(view) (\(rows.count))")
            out += rows.sorted()
        }
        let quarantine = try database.query(
            "SELECT source_name, location, reason, raw_hash FROM quarantine ORDER BY 1, 2, 4")
        out += quarantine.map { "quarantine " + $0.map(\.description).joined(separator: "|") }
        // The schema too: a load killed while its indexes were deferred must end with every index built.
        let schema = try database.query(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name")
        out += schema.map { "schema " + $0.map(\.description).joined(separator: "|") }
        return out
    }

    /// Every file under the reports folder (hidden entries excluded): relative path → bytes.
    func reportFiles() throws -> [String: Data] {
        var out: [String: Data] = [:]
        let root = reportsDirectory
        guard
            let enumerator = FileManager.default.enumerator(
                at: root, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles])
        else { return out }
        for case let url as URL in enumerator {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true else { continue }
            let relative = String(url.path.dropFirst(root.path.count))
            out[relative] = try Data(contentsOf: url)
        }
        return out
    }

    /// Statuses of the run records, oldest first.
    func runStatuses() throws -> [String] {
        try SQLiteDatabase(path: storePath, mode: .readOnly).query("SELECT status FROM run ORDER BY run_id")
            .compactMap { $0[0].textValue }
    }
}
