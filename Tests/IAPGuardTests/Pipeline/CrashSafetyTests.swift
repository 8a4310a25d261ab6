import Foundation
import Testing

@testable import IAPGuard

/// kill -9 at randomised checkpoints across ingest, rules and report, then a re-run: the store's views and
/// the report bytes must equal those of an uninterrupted run. Runs the built binary as a subprocess.
@Suite(.serialized)
struct CrashSafetyTests {
    /// Small batches so that ingest has many commit points.
    static let batchArguments = ["--batch-size", "25"]

    /// The uninterrupted run: its canonical dump, report files and checkpoint counts per stage.
    struct Baseline {
        var dump: [String]
        var reports: [String: Data]
        var checkpoints: [String: Int]
    }

    static let baseline: Result<Baseline, any Error> = Result {
        let world = try PipelineTestWorld()
        defer { world.remove() }
        let log = world.directory.appendingPathComponent("checkpoints.log").path
        let outcome = try world.run(batchArguments, environment: ["IAPGUARD_CHECKPOINT_LOG": log])
        guard outcome.status == 0, !outcome.signaled else {
            throw PipelineTestFailure("baseline run failed (\(outcome.status)): \(outcome.stderr.suffix(2000))")
        }
        var counts: [String: Int] = [:]
        for line in try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let n = Int(parts[1]) {
                counts[String(parts[0]), default: 0] = max(counts[String(parts[0])] ?? 0, n)
            }
        }
        return Baseline(dump: try world.canonicalDump(), reports: try world.reportFiles(), checkpoints: counts)
    }

    /// ≥ 20 kill points: a seeded random sample of ingest and rule checkpoints, plus the report and the
    /// final commit.
    static func killPoints(_ checkpoints: [String: Int]) -> [(String, Int)] {
        var generator = SplitMix(seed: 20_260_301)
        var points: [(String, Int)] = []
        let ingest = checkpoints["ingest"] ?? 0
        let rules = checkpoints["rules"] ?? 0
        var chosen = Set<String>()
        func add(_ stage: String, _ n: Int) {
            if n >= 1, chosen.insert("\(stage):\(n)").inserted { points.append((stage, n)) }
        }
        add("ingest", 1)
        add("ingest", ingest)
        while points.count < 14, ingest > 2, chosen.count < ingest {
            add("ingest", Int(generator.next() % UInt64(ingest)) + 1)
        }
        // Where readers run the rule queries, the scope is committed before the rule stage.
        add("scope", checkpoints["scope"] ?? 0)
        add("rules", 1)
        add("rules", rules)
        while points.count < 21, rules > 2 { add("rules", Int(generator.next() % UInt64(rules)) + 1) }
        add("report", 1)
        add("finish", 1)
        return points
    }

    @Test func uninterruptedRunCoversEveryStageWithEnoughKillPoints() throws {
        let baseline = try Self.baseline.get()
        #expect((baseline.checkpoints["ingest"] ?? 0) >= 10)
        #expect((baseline.checkpoints["rules"] ?? 0) >= 10)
        #expect(baseline.checkpoints["scope"] == (ProcessInfo.processInfo.activeProcessorCount > 1 ? 1 : nil))
        #expect(baseline.checkpoints["report"] == 1)
        #expect(baseline.checkpoints["finish"] == 1)
        #expect(Self.killPoints(baseline.checkpoints).count >= 20)
        #expect(baseline.reports.keys.contains { $0.hasSuffix("/report.html") })
        #expect(baseline.dump.contains { $0.hasPrefix("findings (") && $0 != "findings (0)" })
    }

    @Test func killedAnywhereThenReRunEqualsAnUninterruptedRun() throws {
        let baseline = try Self.baseline.get()
        let points = Self.killPoints(baseline.checkpoints)
        #expect(points.count >= 20)
        for (stage, n) in points {
            let world = try PipelineTestWorld()
            defer { world.remove() }
            let killed = try world.run(
                Self.batchArguments, environment: ["IAPGUARD_CRASH_AFTER": "\(stage):\(n)"])
            #expect(killed.signaled && killed.status == SIGKILL, "kill at \(stage):\(n) did not happen")
            let again = try world.run(Self.batchArguments)
            #expect(again.status == 0, "re-run after kill at \(stage):\(n) failed: \(again.stderr.suffix(1500))")
            let dump = try world.canonicalDump()
            #expect(
                dump == baseline.dump,
                "store differs after kill at \(stage):\(n): \(firstDifference(dump, baseline.dump))")
            let reports = try world.reportFiles()
            #expect(
                reports == baseline.reports,
                "reports differ after kill at \(stage):\(n): \(Set(reports.keys).symmetricDifference(baseline.reports.keys).sorted()) \(reports.keys.filter { reports[$0] != baseline.reports[$0] }.sorted())"
            )
            // Killed during its first load (written without a journal), the store is deleted and loaded
            // again; killed later, the run is resumed under its own id; killed after its commit, it is
            // re-evaluated.
            #expect(try world.runStatuses() == (stage == "finish" ? ["superseded", "ok"] : ["ok"]))
            #expect(again.stderr.contains("first load was killed") == (stage == "ingest"), "\(stage):\(n)")
            #expect(again.stdout.contains("resumed run 1") == (stage != "finish" && stage != "ingest"))
        }
    }

    @Test func reRunningTheSameWindowGivesIdenticalBytesAndStore() throws {
        let baseline = try Self.baseline.get()
        let world = try PipelineTestWorld()
        defer { world.remove() }
        #expect(try world.run(Self.batchArguments).status == 0)
        let second = try world.run(Self.batchArguments)
        #expect(second.status == 0)
        #expect(second.stdout.contains("replaced the findings of run(s) 1"))
        #expect(try world.reportFiles() == baseline.reports)
        let dump = try world.canonicalDump()
        #expect(dump == baseline.dump, "\(firstDifference(dump, baseline.dump))")
        #expect(try world.runStatuses() == ["superseded", "ok"])
    }

    @Test func sigtermStopsBetweenBatchesAndTheNextRunCompletes() throws {
        let baseline = try Self.baseline.get()
        let world = try PipelineTestWorld()
        defer { world.remove() }
        let stopped = try world.run(Self.batchArguments, environment: ["IAPGUARD_SIGNAL_AFTER": "ingest:3"])
        #expect(!stopped.signaled)
        #expect(stopped.status == RunExitCode.interrupted.rawValue)
        #expect(stopped.stderr.contains("stopping after the current batch"))
        #expect(stopped.stdout.contains("stopped early on a signal"))
        #expect(try world.runStatuses() == ["stopped"])
        #expect(try world.reportFiles().isEmpty)
        let again = try world.run(Self.batchArguments)
        #expect(again.status == 0)
        #expect(again.stdout.contains("resumed run 1, which was interrupted (stopped)"))
        #expect(try world.runStatuses() == ["ok"])
        let dump = try world.canonicalDump()
        #expect(dump == baseline.dump, "\(firstDifference(dump, baseline.dump))")
        #expect(try world.reportFiles() == baseline.reports)
    }

    /// A signal once ingest is done (while the scope is planned, or as the rules finish) stops the run too:
    /// the rule stage commits nothing, the run is `stopped` with the signal's code, and the next run ends
    /// exactly like an uninterrupted one.
    @Test(arguments: ["scope:1", "rules:1"])
    func sigtermAfterIngestStopsBeforeTheRuleStageCommitsAndTheNextRunCompletes(point: String) throws {
        let baseline = try Self.baseline.get()
        let world = try PipelineTestWorld()
        defer { world.remove() }
        let stopped = try world.run(Self.batchArguments, environment: ["IAPGUARD_SIGNAL_AFTER": point])
        #expect(!stopped.signaled)
        #expect(stopped.status == RunExitCode.interrupted.rawValue)
        #expect(try world.runStatuses() == ["stopped"])
        #expect(try world.reportFiles().isEmpty)
        let again = try world.run(Self.batchArguments)
        #expect(again.status == 0)
        #expect(try world.runStatuses() == ["ok"])
        let dump = try world.canonicalDump()
        #expect(dump == baseline.dump, "\(firstDifference(dump, baseline.dump))")
        #expect(try world.reportFiles() == baseline.reports)
    }

    @Test func sigintStopsBetweenBatchesWithTheShellsInterruptCode() throws {
        let baseline = try Self.baseline.get()
        let world = try PipelineTestWorld()
        defer { world.remove() }
        let stopped = try world.run(Self.batchArguments, environment: ["IAPGUARD_SIGNAL_AFTER": "ingest:2:INT"])
        #expect(!stopped.signaled)
        #expect(stopped.status == RunExitCode.interruptedFromTerminal.rawValue)
        #expect(stopped.status == 130)
        #expect(stopped.stderr.contains("stopping after the current batch"))
        #expect(try world.runStatuses() == ["stopped"])
        let again = try world.run(Self.batchArguments)
        #expect(again.status == 0)
        #expect(try world.runStatuses() == ["ok"])
        #expect(try world.canonicalDump() == baseline.dump)
        #expect(try world.reportFiles() == baseline.reports)
    }

    @Test func unwritableReportsFolderFailsClearlyAndLeavesTheStoreConsistent() throws {
        let baseline = try Self.baseline.get()
        let world = try PipelineTestWorld()
        defer { world.remove() }
        // Running as root ignores permissions, so the reports "folder" is a regular file instead.
        try Data("not a folder".utf8).write(to: world.reportsDirectory)
        let failed = try world.run(Self.batchArguments)
        #expect(failed.status == RunExitCode.ioError.rawValue)
        #expect(failed.stderr.contains("cannot write report"))
        #expect(try world.runStatuses() == ["failed"])
        let database = try SQLiteDatabase(path: world.storePath, mode: .readOnly)
        #expect(try database.scalar("SELECT COUNT(*) FROM finding")?.integerValue == 0)
        #expect(try database.scalar("SELECT COUNT(*) FROM transactions")?.integerValue ?? 0 > 0)
        try FileManager.default.removeItem(at: world.reportsDirectory)
        let again = try world.run(Self.batchArguments)
        #expect(again.status == 0)
        #expect(try world.runStatuses() == ["ok"])
        #expect(try world.canonicalDump() == baseline.dump)
        #expect(try world.reportFiles() == baseline.reports)
    }
}

/// A failure while preparing a test's data.
struct PipelineTestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The first line where two dumps differ, for failure messages.
func firstDifference(_ a: [String], _ b: [String]) -> String {
    for (index, (x, y)) in zip(a, b).enumerated() where x != y {
        return "line \(index): \(x.prefix(300)) ≠ \(y.prefix(300))"
    }
    return a.count == b.count ? "none" : "lengths \(a.count) vs \(b.count)"
}

/// A tiny seeded generator (SplitMix64) so the kill points are random but reproducible.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D4_9BB1_33B1_11EB
        return z ^ (z >> 31)
    }
}
