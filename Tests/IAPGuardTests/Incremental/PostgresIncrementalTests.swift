import Foundation
import Testing

@testable import IAPGuard
@testable import IAPGuardSampleWorld

/// The incremental evaluation on a PostgreSQL store: the scope SQL, the planner's tables and the scoped
/// queries run there too, and daily incremental runs report the same findings as on SQLite.
@Suite(.enabled(if: TestPostgres.available, "no PostgreSQL server for the tests (see PostgresAvailabilityTests)"))
struct PostgresIncrementalTests {
    @Test func dailyIncrementalRunsOnPostgresReportWhatSQLiteReports() throws {
        let root = IncrementalEqualityTests.repositoryRoot()
        let scratch = TestScratch.root.appendingPathComponent("iapguard-pg-incr-\(UUID())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let world = scratch.appendingPathComponent("world")
        let end = WorldGenerator.defaultEnd
        _ = try WorldGenerator(
            options: .init(
                seed: 5, users: 120, days: 10, end: end, rulesPath: root.appendingPathComponent("rules").path)
        ).write(to: world)
        var all: [String: [String]] = [:]
        let names = IncrementalEqualityTests.sources + ["credits.jsonl"]
        for name in names {
            all[name] = try IncrementalEqualityTests.lines(
                world.appendingPathComponent("data").appendingPathComponent(name))
        }
        let sqlite = try IncrementalEqualityTests.makeFolder(world: world, at: scratch.appendingPathComponent("sqlite"))
        let postgres = try IncrementalEqualityTests.makeFolder(
            world: world, at: scratch.appendingPathComponent("postgres"),
            postgres: try TestPostgres.freshSettings("incremental"))
        let day = IncrementalEqualityTests.day
        var fed: [String: Int] = [:]
        var lastFolders: (String?, String?) = (nil, nil)
        for (step, cut) in [0.8, 0.9, 1.0, 1.0].enumerated() {
            for name in names {
                let lines = all[name] ?? []
                let upTo = Int(Double(lines.count) * cut)
                let from = fed[name] ?? 0
                guard upTo > from else { continue }
                fed[name] = upTo
                for folder in [sqlite, postgres] {
                    let target = name == "credits.jsonl" ? "credits/day-\(step).jsonl" : name
                    try IncrementalEqualityTests.append(lines[from..<upTo], to: target, in: folder)
                }
            }
            let options = Pipeline.Options(until: end - Int64(2 - step) * day, failOn: nil)
            let onSQLite = try sqlite.pipeline.run(options)
            let onPostgres = try postgres.pipeline.run(options)
            #expect(onPostgres.ruleErrors.isEmpty, "\(onPostgres.ruleErrors)")
            #expect(onPostgres.errors.isEmpty, "step \(step): \(onPostgres.errors)")
            #expect(onSQLite.errors.isEmpty, "step \(step): \(onSQLite.errors)")
            if step > 0 {
                #expect(
                    onPostgres.ruleModes.values.filter { $0 == "incremental" }.count >= 15, "\(onPostgres.ruleModes)")
                #expect(onPostgres.ruleModes == onSQLite.ruleModes)
            }
            lastFolders = (onSQLite.reportFolder, onPostgres.reportFolder)
        }
        let expected = try PostgresPipelineTests.comparableFindings(try #require(lastFolders.0))
        let actual = try PostgresPipelineTests.comparableFindings(try #require(lastFolders.1))
        #expect(expected.count > 10)
        #expect(actual.count == expected.count)
        for (a, b) in zip(actual, expected) where a != b {
            Issue.record("postgres: \(a)\nsqlite:   \(b)")
        }
    }
}
