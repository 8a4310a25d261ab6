import Foundation
import IAPGuard
import Logging

/// The whole job on the world (ingest with verification, rules, reports) in this process, from an empty
/// store: seconds, records/s, peak RSS and bytes written beside the final store size; then the
/// whole-pipeline peer (`PeerPipeline`) on the same world and the ratios of the two.
enum RunBenchmark {
    static func run(_ options: BenchOptions) throws {
        try PeerPipeline.checkPrerequisites(options)
        var config = try BenchWorld.config(options)
        let folder = options.directory.appendingPathComponent("run")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        config.storePath = folder.appendingPathComponent("iapguard.sqlite")
        config.reportsDirectory = folder.appendingPathComponent("reports")
        if !options.skipRules.isEmpty, let rules = config.rulesDirectory {
            // The rules minus --skip-rules (ones that do not finish at this size).
            let filtered = folder.appendingPathComponent("rules")
            try FileManager.default.createDirectory(at: filtered, withIntermediateDirectories: true)
            for file in try FileManager.default.contentsOfDirectory(at: rules, includingPropertiesForKeys: nil)
            where !options.skipRules.contains(where: { file.lastPathComponent.hasPrefix($0) }) {
                try FileManager.default.copyItem(at: file, to: filtered.appendingPathComponent(file.lastPathComponent))
            }
            config.rulesDirectory = filtered
            print("run     rules left out (--skip-rules): \(options.skipRules.sorted().joined(separator: ", "))")
        }
        Measure.header("run", "whole job (Pipeline.run) on \(options.worldDirectory.path)")
        let writtenBefore = Measure.ioCounter("write_bytes")
        let cancelledBefore = Measure.ioCounter("cancelled_write_bytes") ?? 0
        let (summary, seconds) = try runPipeline(config)
        let written = Measure.ioCounter("write_bytes").map { $0 - (writtenBefore ?? 0) }
        let cancelled = (Measure.ioCounter("cancelled_write_bytes") ?? 0) - cancelledBefore
        let records = summary.sources.reduce(0) { $0 + $1.counts.records }
        let findings = summary.ruleStats.reduce(0) { $0 + $1.hits + $1.inconclusive }
        Measure.line(
            "run", "Pipeline.run: \(records) records, \(findings) findings",
            String(format: "%8.1f s  ", seconds) + Measure.rate(Double(records), seconds) + " records")
        let transactions = summary.storeCounts["transactions"] ?? 0
        Measure.line("run", "  store: \(transactions) transactions", "verification \(summary.verification)")
        for source in summary.sources {
            guard let sourceSeconds = source.seconds, let cpu = source.cpuSeconds else { continue }
            let target = source.kind == "signed-transactions" ? "  (target ≥ 25,000/s, CPU ≥ 180 %)" : ""
            Measure.line(
                "run", "  ingest \(source.name) (\(source.kind)): \(source.counts.records) records",
                String(format: "%8.1f s  ", sourceSeconds) + Measure.rate(Double(source.counts.records), sourceSeconds)
                    + String(format: "  CPU %.0f %%", 100 * cpu / max(sourceSeconds, 1e-6)) + target)
        }
        for (stage, stageSeconds) in summary.stageSeconds.sorted(by: { $0.key < $1.key }) {
            Measure.line("run", "  stage \(stage)", String(format: "%8.1f s", stageSeconds))
        }
        for stats in summary.ruleStats.sorted(by: { $0.ruleID < $1.ruleID }) {
            Measure.line(
                "run", "  \(stats.ruleID) query",
                String(format: "%8.2f s  ", stats.queryMillis / 1000)
                    + "\(stats.hits + stats.inconclusive) findings"
                    + String(format: " (made in %.2f s)", (stats.findingMillis ?? 0) / 1000)
                    + "\(stats.error.map { "  error: \($0)" } ?? "")")
        }
        let peakRSS = Measure.peakRSS()
        Measure.line("run", "peak RSS of the whole run", Measure.mib(peakRSS))
        let storeBytes = ["", "-wal", "-shm"].reduce(0) { total, suffix in
            let path = config.storePath.path + suffix
            return total + ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int ?? 0)
        }
        if let written {
            Measure.line(
                "run", "bytes written during the run (/proc/self/io write_bytes)",
                "\(Measure.mib(written)) (cancelled before writeback \(Measure.mib(cancelled)))  final store "
                    + "\(Measure.mib(storeBytes))  ratio " + Measure.ratio(Double(written), Double(storeBytes))
                    + " (target ≤ 3)")
        } else {
            Measure.line("run", "bytes written during the run", "unknown (/proc/self/io unreadable)")
        }
        let (rules, _) = config.rulesDirectory.map { RuleSet.load(from: $0) } ?? ([], [])
        try PeerPipeline.run(
            options, config: config, rules: rules,
            ours: PeerPipeline.Ours(
                seconds: seconds, peakRSS: peakRSS, storePath: config.storePath.path,
                rulesAndReportSeconds: ["rules", "cases", "report"].reduce(0) { $0 + (summary.stageSeconds[$1] ?? 0) }))
    }

    /// `Pipeline.run` for the world's window (warnings only on stderr), timed.
    static func runPipeline(_ config: Config) throws -> (RunSummary, Double) {
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        let pipeline = Pipeline(config: config, verifier: try JWSVerifier.make(for: config), logger: logger)
        return try Measure.time { try pipeline.run(Pipeline.Options(until: BenchWorld.now, failOn: nil)) }
    }
}
