import Foundation
import IAPGuard
import Logging

/// Incremental stage: the store is built from every input record before the world's last day, run fully up
/// to that day; then the day's records are added and the job runs again, incrementally (`--split tail`, and
/// always `--in-place`: the last 1 % of each file's lines instead, see ``InputSplit``). Prints the seconds of
/// each run and of its stages, the ratio
/// incremental / full, a full re-evaluation of the final store for comparison, and DuckDB (2 threads)
/// re-scanning everything with the same rule SQL, with the ratio.
enum IncrementalBenchmark {
    static func run(_ options: BenchOptions) throws {
        var config = try BenchWorld.config(options)
        let folder = options.directory.appendingPathComponent("incremental")
        try InputSplit.restoreInterrupted(folder: folder)
        try? FileManager.default.removeItem(at: folder)
        let data = folder.appendingPathComponent("data")
        try FileManager.default.createDirectory(at: data, withIntermediateDirectories: true)
        config.storePath = folder.appendingPathComponent("iapguard.sqlite")
        config.reportsDirectory = folder.appendingPathComponent("reports")
        // This checkout's rules (with their incremental: blocks), minus --skip-rules.
        let rules = folder.appendingPathComponent("rules")
        try FileManager.default.createDirectory(at: rules, withIntermediateDirectories: true)
        let repositoryRules = BenchOptions.repository.appendingPathComponent("rules")
        for file in try FileManager.default.contentsOfDirectory(at: repositoryRules, includingPropertiesForKeys: nil)
        where !options.skipRules.contains(where: { file.lastPathComponent.hasPrefix($0) }) {
            try FileManager.default.copyItem(at: file, to: rules.appendingPathComponent(file.lastPathComponent))
        }
        config.rulesDirectory = rules
        let byTime = options.splitByTime && !options.inPlace
        Measure.header(
            "incr",
            (byTime
                ? "base = every record before the world's last day, then + the last day's records "
                : "base = all but the last 1 % of each input's lines, then + that 1 % ")
                + (options.dailyFiles ? "as a new file per source (daily files)" : "appended to each file"))
        // The split streams (a 10M world's inputs are 17 GB). `--in-place` truncates the world's own files
        // instead of copying 99 % of them (for disks without room for a copy) and appends their tails back:
        // after the full run, or with `--daily-files` (the base a hard link, the day a new file) when the stage
        // ends; an interrupted in-place run is restored from `tails/` the next time this stage starts.
        let layout: InputSplit.Layout =
            switch (options.inPlace, options.dailyFiles) {
            case (true, true): .dailyFilesInPlace
            case (true, false): .inPlace
            case (false, true): .dailyFiles
            case (false, false): .appended
            }
        var split = try InputSplit(folder: folder, layout: layout)
        var tailRecords = 0
        for index in config.sources.indices {
            let source = config.sources[index]
            let part = try split.cut(
                source.path, headerLines: source.format == .csv ? 1 : 0, into: data,
                dayStart: byTime ? BenchWorld.now - 86_400_000 : nil)
            tailRecords += part.tailLines
            config.sources[index].path = part.source
        }
        var logger = Logger(label: "bench")
        // IAPGUARD_BENCH_LOG=debug shows the planner's scope timing ("scope timing") and the persist timing.
        logger.logLevel =
            ProcessInfo.processInfo.environment["IAPGUARD_BENCH_LOG"].flatMap { Logger.Level(rawValue: $0) } ?? .warning
        let pipeline = Pipeline(config: config, verifier: try JWSVerifier.make(for: config), logger: logger)
        let (first, firstSeconds) = try Measure.time {
            try pipeline.run(Pipeline.Options(until: BenchWorld.now - 86_400_000, failOn: nil))
        }
        describe("full run (the base)", first, firstSeconds)
        // Resetting the kernel's high-water mark below resets getrusage's peak too: keep the stage's own.
        var stagePeak = Measure.peakRSS()
        Measure.line("incr", "peak RSS after the full run", Measure.mib(stagePeak))
        try split.appendTails()
        // A daily run starts a day after the last one, not while the kernel still writes its 2.6 GB back (at
        // 1M that overlap took 0.4–0.6 s off the daily run's ingest): wait for the writeback first.
        let (_, syncSeconds) = Measure.time { sync() }
        Measure.line("incr", "writeback of the full run before the daily run", String(format: "%.2f s", syncSeconds))
        // With --daily-repeats, each daily run starts from a copy of the store the full run left.
        let baseCopy = try options.dailyRepeats > 1 ? StoreCopy(of: config.storePath, in: folder) : nil
        var dailies: [(summary: RunSummary, seconds: Double)] = []
        var dailyPeak: Int?
        for repeatIndex in 0..<options.dailyRepeats {
            if repeatIndex > 0, let baseCopy {
                try baseCopy.restore()
                let (_, restoreSync) = Measure.time { sync() }
                Measure.line(
                    "incr", "store restored for daily run \(repeatIndex + 1)",
                    String(format: "sync %.2f s", restoreSync))
            }
            // At 10M the store is as large as the memory: how much of it the daily run finds cached moves it.
            try PageCache.report("incr", config.storePath.path, before: "the daily run", warm: options.warmStore)
            let windowed = Measure.resetPeakRSS()
            let (summary, seconds) = try Measure.time {
                try pipeline.run(Pipeline.Options(until: BenchWorld.now, failOn: nil))
            }
            let label = options.dailyRepeats > 1 ? " \(repeatIndex + 1) of \(options.dailyRepeats)" : ""
            describe("incremental run\(label) (+\(tailRecords) records)", summary, seconds)
            if windowed { dailyPeak = max(dailyPeak ?? 0, Measure.windowPeakRSS()) }
            dailies.append((summary, seconds))
        }
        try baseCopy?.remove()
        // The median daily run (the upper one of an even count) stands for the rest of the stage.
        let median = dailies.sorted { $0.seconds < $1.seconds }[dailies.count / 2]
        let (second, secondSeconds) = median
        if dailies.count > 1 {
            Measure.line(
                "incr", "daily runs",
                dailies.map { String(format: "%.2f s", $0.seconds) }.joined(separator: ", ")
                    + String(format: "; median %.2f s", secondSeconds))
        }
        if let dailyPeak {
            Measure.line("incr", "peak RSS of the incremental run alone", Measure.mib(dailyPeak))
        }
        stagePeak = max(stagePeak, Measure.peakRSS())
        Measure.line("incr", "peak RSS after the incremental run", Measure.mib(stagePeak))
        let incremental = second.ruleModes.values.filter { $0 == "incremental" }.count
        Measure.line(
            "incr", "rules evaluated incrementally",
            "\(incremental) of \(second.ruleModes.count); scope \(second.scopeKeys)")
        for (rule, mode) in second.ruleModes.sorted(by: { $0.key < $1.key }) where mode != "incremental" {
            Measure.line("incr", "  \(rule)", mode)
        }
        // Where the incremental rule stage goes: the slowest scoped queries.
        for stats in second.ruleStats.sorted(by: { $0.queryMillis > $1.queryMillis }).prefix(6) {
            Measure.line(
                "incr", "  \(stats.ruleID) query, incremental run",
                String(format: "%8.3f s  %d findings", stats.queryMillis / 1000, stats.hits + stats.inconclusive))
        }
        let incrementalRules = second.stageSeconds["rules"] ?? 0
        Measure.line(
            "incr", "ratio incremental / full run",
            String(
                format: "whole run ×%.3f  (%.2f s / %.2f s)", secondSeconds / firstSeconds, secondSeconds, firstSeconds)
                + " (target < 0.05)")
        // The peer's whole run, as the latest `run` at this size measured it (the full world, not the 99 %).
        if let text = try? String(contentsOf: PeerPipeline.peerSecondsFile(options), encoding: .utf8),
            let peerSeconds = Double(text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            Measure.line(
                "incr", "ratio incremental / peer's whole run",
                String(
                    format: "×%.3f  (%.2f s / %.2f s, the peer as the latest `run` at this size measured it)"
                        + " (target ≤ 0.1)", secondSeconds / peerSeconds, secondSeconds, peerSeconds))
        } else {
            Measure.line("incr", "ratio incremental / peer's whole run", "unknown: run `iapguard-bench run` first")
        }
        if options.noRescan {
            Measure.line("incr", "DuckDB and the full re-evaluation", "skipped (--no-rescan)")
            try split.restoreWorld()
            return
        }
        // DuckDB before the re-evaluation: at 10M the re-evaluation is the longest part and the least needed.
        let duckSeconds = try duckDB(
            options, config: config, storePath: config.storePath.path, incremental: secondSeconds,
            rulesStage: incrementalRules)
        // The same final store evaluated fully (the rule states forgotten; unchanged files are skipped).
        let store = try SQLiteStore(path: config.storePath.path)
        try store.database.run("DELETE FROM rule_state", [])
        let (third, thirdSeconds) = try Measure.time {
            try pipeline.run(Pipeline.Options(until: BenchWorld.now + 1, failOn: nil))
        }
        describe("full re-evaluation of the final store", third, thirdSeconds)
        let fullRules = third.stageSeconds["rules"] ?? 0
        Measure.line(
            "incr", "ratio incremental / full re-evaluation",
            String(
                format: "whole run ×%.3f  rule stage ×%.3f (%.2f s / %.2f s)", secondSeconds / thirdSeconds,
                incrementalRules / max(fullRules, 1e-9), incrementalRules, fullRules))
        // Each rule's full query (the re-evaluation; findings and evidence not included) beside DuckDB's.
        var oursTotal = 0.0
        var duckTotal = 0.0
        for stats in third.ruleStats.sorted(by: { $0.ruleID < $1.ruleID }) {
            let ours = stats.queryMillis / 1000
            guard let duck = duckSeconds[stats.ruleID] else {
                Measure.line("incr", "  \(stats.ruleID) full query", String(format: "%8.3f s  DuckDB —", ours))
                continue
            }
            oursTotal += ours
            duckTotal += duck
            Measure.line(
                "incr", "  \(stats.ruleID) full query",
                String(format: "%8.3f s  DuckDB %8.3f s  iapguard/DuckDB ×%.2f", ours, duck, ours / max(duck, 1e-9)))
        }
        if duckTotal > 0 {
            Measure.line(
                "incr", "rule queries on the rules DuckDB ran",
                String(
                    format: "iapguard %8.3f s  DuckDB %8.3f s  ×%.2f", oursTotal, duckTotal, oursTotal / duckTotal))
        }
        Measure.line("incr", "peak RSS of this stage", Measure.mib(max(stagePeak, Measure.peakRSS())))
        try split.restoreWorld()
    }

    static func describe(_ what: String, _ summary: RunSummary, _ seconds: Double) {
        let stages = summary.stageSeconds.sorted { $0.key < $1.key }.map { String(format: "%@ %.2f", $0.key, $0.value) }
        Measure.line("incr", what, String(format: "%8.2f s  ", seconds) + stages.joined(separator: ", "))
    }

    /// DuckDB re-running every rule's full SQL over the whole final store; returns each rule's seconds.
    @discardableResult
    static func duckDB(
        _ options: BenchOptions, config: Config, storePath: String, incremental: Double, rulesStage: Double
    ) throws -> [String: Double] {
        guard let directory = config.rulesDirectory else { return [:] }
        let (rules, _) = RuleSet.load(from: directory)
        let rulesFile = options.directory.appendingPathComponent("rules-for-duckdb-incremental.json")
        try PythonSideBySide.writeRules(rules, config: config, to: rulesFile)
        let rows: [[String: Any]]
        do {
            rows = try PythonSideBySide.run(options, ["duckdb", storePath, rulesFile.path])
        } catch {
            print("incremental   DuckDB not measured: \(error)")
            return [:]
        }
        var total = 0.0
        var ran = 0
        var perRule: [String: Double] = [:]
        for row in rows where row["error"] == nil {
            guard let rule = row["rule"] as? String else { continue }
            let seconds = row["seconds"] as? Double ?? 0
            perRule[rule] = seconds
            total += seconds
            ran += 1
        }
        Measure.line(
            "incr", "DuckDB re-scanning everything (\(ran) rules, 2 threads)",
            String(
                format: "%8.3f s  DuckDB / incremental run ×%.2f  DuckDB / incremental rule stage ×%.2f", total,
                total / max(incremental, 1e-9), total / max(rulesStage, 1e-9)))
        return perRule
    }
}

/// A copy of a closed store beside the stage's files, put back before each repeated daily run.
struct StoreCopy {
    let store: URL
    let copy: URL

    /// Copies `store` (closed: no WAL beside it) to `folder/base-store.sqlite`.
    init(of store: URL, in folder: URL) throws {
        self.store = store
        copy = folder.appendingPathComponent("base-store.sqlite")
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: store.path + suffix) {
            let size = (try? FileManager.default.attributesOfItem(atPath: store.path + suffix)[.size] as? Int) ?? 0
            guard size == 0 || suffix == "-shm" else {
                throw BenchError("\(store.path)\(suffix) is not empty: the store is not closed, no copy taken")
            }
        }
        try? FileManager.default.removeItem(at: copy)
        try FileManager.default.copyItem(at: store, to: copy)
    }

    /// Puts the copy back in place of the store, without the store's WAL and shared-memory files.
    func restore() throws {
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: store.path + suffix) }
        try FileManager.default.removeItem(at: store)
        try FileManager.default.copyItem(at: copy, to: store)
    }

    func remove() throws {
        try FileManager.default.removeItem(at: copy)
    }
}
