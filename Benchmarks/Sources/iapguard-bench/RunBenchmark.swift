import Foundation
import IAPGuard
import Logging

/// The whole job on the world (ingest with verification, rules, reports) in this process, from an empty
/// store: seconds, records/s and peak RSS (the 1 GiB target is for this figure).
enum RunBenchmark {
    static func run(_ options: BenchOptions) throws {
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
        let (summary, seconds) = try runPipeline(config)
        let records = summary.sources.reduce(0) { $0 + $1.counts.records }
        let findings = summary.ruleStats.reduce(0) { $0 + $1.hits + $1.inconclusive }
        Measure.line(
            "run", "Pipeline.run: \(records) records, \(findings) findings",
            String(format: "%8.1f s  ", seconds) + Measure.rate(Double(records), seconds) + " records")
        let transactions = summary.storeCounts["transactions"] ?? 0
        Measure.line("run", "  store: \(transactions) transactions", "verification \(summary.verification)")
        for (stage, stageSeconds) in summary.stageSeconds.sorted(by: { $0.key < $1.key }) {
            Measure.line("run", "  stage \(stage)", String(format: "%8.1f s", stageSeconds))
        }
        for stats in summary.ruleStats.sorted(by: { $0.ruleID < $1.ruleID }) {
            Measure.line(
                "run", "  \(stats.ruleID) query",
                String(format: "%8.2f s  ", stats.queryMillis / 1000)
                    + "\(stats.hits + stats.inconclusive) findings\(stats.error.map { "  error: \($0)" } ?? "")")
        }
        Measure.line("run", "peak RSS of the whole run", Measure.mib(Measure.peakRSS()))
    }

    /// `Pipeline.run` for the world's window (warnings only on stderr), timed.
    static func runPipeline(_ config: Config) throws -> (RunSummary, Double) {
        var logger = Logger(label: "bench")
        logger.logLevel = .warning
        let pipeline = Pipeline(config: config, verifier: try JWSVerifier.make(for: config), logger: logger)
        return try Measure.time { try pipeline.run(Pipeline.Options(until: BenchWorld.now, failOn: nil)) }
    }
}
