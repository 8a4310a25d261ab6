import Foundation
import Logging
import Testing

@testable import IAPGuard
@testable import IAPGuardSampleWorld

/// Cases on a PostgreSQL store: the same cases as SQLite, and a triage state that survives later runs
/// (an incremental one, a `--full-rebuild`, one more).
// Needs a PostgreSQL server (see TestPostgres); skipped without one, PostgresAvailabilityTests says why.
@Suite(.enabled(if: TestPostgres.available, "no PostgreSQL server for the tests (see PostgresAvailabilityTests)"))
struct PostgresCaseTests {
    @Test func aTriageStateSurvivesLaterRunsOnPostgresAndCasesMatchSQLite() throws {
        let dir = TestScratch.root.appendingPathComponent("iapguard-pg-cases-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let end = WorldGenerator.defaultEnd
        _ = try WorldGenerator(
            options: .init(
                seed: 11, users: 200, days: 10, end: end,
                rulesPath: Fixtures.repoRoot.appendingPathComponent("rules").path)
        ).write(to: dir)
        let sqliteConfig = try Config.load(from: dir.appendingPathComponent("iapguard.yml"))
        var config = sqliteConfig
        let settings = try TestPostgres.freshSettings("cases")
        config.postgresStore = settings
        config.reportsDirectory = dir.appendingPathComponent("reports-pg")
        let logger = Logger(label: "iapguard.test", factory: { _ in SwiftLogNoOpLogHandler() })
        let pipeline = Pipeline(config: config, verifier: try JWSVerifier.make(for: config), logger: logger)
        let first = try pipeline.run(Pipeline.Options(until: end, failOn: nil))
        #expect(first.ruleErrors.isEmpty, "\(first.ruleErrors)")
        _ = try Pipeline(config: sqliteConfig, verifier: try JWSVerifier.make(for: sqliteConfig), logger: logger)
            .run(Pipeline.Options(until: end, failOn: nil))

        let store = try PostgresStore(settings: settings)
        let onPostgres = try CaseReader(connection: store.connection).list()
        let sqlite = try SQLiteStore(path: sqliteConfig.storePath.path, readOnly: true)
        let onSQLite = try CaseReader(connection: sqlite.connection).list()
        #expect(onPostgres.count > 20)
        #expect(onPostgres.map(\.caseID) == onSQLite.map(\.caseID))
        #expect(onPostgres.map(\.findingIDs) == onSQLite.map(\.findingIDs))
        #expect(onPostgres.map(\.moneyAtRisk) == onSQLite.map(\.moneyAtRisk))

        let caseID = try #require(onPostgres.first).caseID
        try CaseTriage(connection: store.connection).setStatus(
            caseID, to: .confirmedFraud, by: "analyst-2", note: "chargeback", at: 1)
        for options in [
            Pipeline.Options(until: end + 60_000, failOn: nil),
            Pipeline.Options(until: end + 120_000, failOn: nil, fullRebuild: true),
            Pipeline.Options(until: end + 180_000, failOn: nil),
        ] {
            let summary = try pipeline.run(options)
            #expect(summary.ruleErrors.isEmpty)
            let triaged = try CaseReader(connection: store.connection).find(caseID)
            #expect(triaged.status == .confirmedFraud && triaged.statusBy == "analyst-2")
        }
        #expect(try CaseReader(connection: store.connection).history(of: caseID).map(\.to) == [.open, .confirmedFraud])
    }
}
