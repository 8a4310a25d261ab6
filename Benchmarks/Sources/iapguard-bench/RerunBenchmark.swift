import Foundation
import IAPGuard

/// The rule and report stages again, on the store the `run` stage left: the same window, so the run's
/// findings are rewound and every rule is evaluated fully; the inputs are unchanged, so ingest only checks
/// them. Seconds per stage and peak RSS of the rule and report stages at scale, without a new ingest.
enum RerunBenchmark {
    static func run(_ options: BenchOptions) throws {
        var config = try BenchWorld.config(options)
        let folder = options.directory.appendingPathComponent("run")
        let store = folder.appendingPathComponent("iapguard.sqlite")
        guard FileManager.default.fileExists(atPath: store.path) else {
            throw BenchError("\(store.path) does not exist: run the run stage first")
        }
        config.storePath = store
        config.reportsDirectory = folder.appendingPathComponent("reports")
        Measure.header("rerun", "rules and report again (window re-evaluated) on \(store.path)")
        let (summary, seconds) = try RunBenchmark.runPipeline(config)
        let findings = summary.ruleStats.reduce(0) { $0 + $1.hits + $1.inconclusive + $1.suppressed }
        let full = summary.ruleModes.values.filter { $0.hasPrefix("full") }.count
        Measure.line(
            "rerun", "Pipeline.run: \(findings) findings, \(full) of \(summary.ruleModes.count) rules full",
            String(format: "%8.1f s", seconds))
        for (stage, stageSeconds) in summary.stageSeconds.sorted(by: { $0.key < $1.key }) {
            Measure.line("rerun", "  stage \(stage)", String(format: "%8.1f s", stageSeconds))
        }
        Measure.line("rerun", "peak RSS of the whole rerun", Measure.mib(Measure.peakRSS()))
    }
}
