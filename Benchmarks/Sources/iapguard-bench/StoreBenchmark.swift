import Foundation
import IAPGuard
import IAPGuardSampleWorld
import Logging

/// `iapguard-bench store`: the same generated world run on SQLite and on PostgreSQL
/// (`IAPGUARD_BENCH_PG_URL`, a scratch database; a fresh schema per run). Prints records ingested per
/// second (run time less rule time) and each rule's query time on both stores.
enum StoreBenchmark {
    /// The benchmark cannot run as configured.
    struct Failure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    static func run() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let url = environment["IAPGUARD_BENCH_PG_URL"] else {
            throw Failure(message: "set IAPGUARD_BENCH_PG_URL=postgres://user@host:port/db")
        }
        let users = Int(environment["IAPGUARD_BENCH_USERS"] ?? "") ?? 3000
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("iapguard-bench-store")
        try? FileManager.default.removeItem(at: directory)
        let end = WorldGenerator.defaultEnd
        let rules = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("rules").path
        _ = try WorldGenerator(
            options: WorldGenerator.Options(seed: 42, users: users, days: 60, end: end, rulesPath: rules)
        ).write(to: directory)
        let base = try Config.load(from: directory.appendingPathComponent("iapguard.yml"))
        var postgres = base
        var settings = try PostgresSettings.parse(url)
        settings.schema = "bench_\(Int(Date().timeIntervalSince1970))"
        postgres.postgresStore = settings
        postgres.reportsDirectory = directory.appendingPathComponent("reports-pg")

        var results: [(String, RunSummary, Double)] = []
        for (name, config) in [("sqlite", base), ("postgres", postgres)] {
            let clock = ContinuousClock()
            let start = clock.now
            let summary = try Pipeline(
                config: config, verifier: try JWSVerifier.make(for: config), logger: Logger(label: "bench")
            ).run(Pipeline.Options(until: end, failOn: nil))
            let elapsed = start.duration(to: clock.now)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            results.append((name, summary, seconds))
        }
        print("store benchmark: \(users) users, 60 days")
        print("store\trecords\trun s\trules s\tingest records/s")
        for (name, summary, seconds) in results {
            let records = summary.sources.reduce(0) { $0 + $1.counts.records }
            let ruleSeconds = summary.ruleStats.reduce(0) { $0 + $1.queryMillis } / 1000
            let ingest = max(seconds - ruleSeconds, 0.001)
            print(
                "\(name)\t\(records)\t\(String(format: "%.2f", seconds))\t\(String(format: "%.2f", ruleSeconds))\t\(Int(Double(records) / ingest))"
            )
        }
        print("rule\tsqlite ms\tpostgres ms")
        let sqliteStats = results[0].1.ruleStats
        let postgresStats = Dictionary(uniqueKeysWithValues: results[1].1.ruleStats.map { ($0.ruleID, $0.queryMillis) })
        for stats in sqliteStats {
            print(
                "\(stats.ruleID)\t\(String(format: "%.1f", stats.queryMillis))\t\(String(format: "%.1f", postgresStats[stats.ruleID] ?? 0))"
            )
        }
    }
}
