import Foundation

// iapguard-bench STAGE [options] — one stage per pipeline step; each prints its figures, ratios to floors
// measured in the same run, seconds and peak RSS. See Benchmarks/README.md.
do {
    let options = try BenchOptions(arguments: Array(CommandLine.arguments.dropFirst()))
    switch options.stage {
    case "all": try AllStages.run(options)
    case "generate": try BenchWorld.stage(options)
    case "parse": try ParseBenchmark.run(options)
    case "verify": try VerifyBenchmark.run(options)
    case "ingest": try IngestBenchmark.run(options)
    case "rules": try RulesBenchmark.run(options)
    case "reports": try ReportsBenchmark.run(options)
    case "run": try RunBenchmark.run(options)
    case "rerun": try RerunBenchmark.run(options)
    case "store": try StoreBenchmark.run()
    case "incremental": try IncrementalBenchmark.run(options)
    case "scopes": try ScopeMemoryBenchmark.run(options)
    default: throw BenchError("unknown stage \(options.stage)\n\(BenchOptions.usage)")
    }
} catch {
    FileHandle.standardError.write(Data("iapguard-bench: \(error)\n".utf8))
    exit(1)
}
