import Foundation
import Logging
import Testing

@testable import IAPGuard
@testable import IAPGuardSampleWorld

// Needs a PostgreSQL server (see TestPostgres); skipped without one, PostgresAvailabilityTests says why.
@Suite(.enabled(if: TestPostgres.available, "no PostgreSQL server for the tests (see PostgresAvailabilityTests)"))
struct PostgresPipelineTests {
    /// findings.csv without the columns that differ between two stores by construction (run ids).
    static func comparableFindings(_ folder: String) throws -> [String] {
        var header: [String] = []
        var lines: [String] = []
        try CSVReader(url: URL(fileURLWithPath: folder).appendingPathComponent("findings.csv")).forEachRecord {
            result in
            guard case .success(let record) = result else { return }
            if header.isEmpty {
                header = record.fields
                return
            }
            let kept = zip(header, record.fields).filter { $0.0 != "run_id" && $0.0 != "first_seen_run_id" }
            lines.append(kept.map { "\($0.0)=\($0.1)" }.joined(separator: "|"))
        }
        return lines.sorted()
    }

    @Test func demoWorldFindingsAreIdenticalOnSQLiteAndPostgres() throws {
        let dir = TestScratch.root.appendingPathComponent(
            "iapguard-pg-world-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let end = WorldGenerator.defaultEnd
        let options = WorldGenerator.Options(
            seed: 11, users: 200, days: 10, end: end,
            rulesPath: Fixtures.repoRoot.appendingPathComponent("rules").path)
        _ = try WorldGenerator(options: options).write(to: dir)
        let sqliteConfig = try Config.load(from: dir.appendingPathComponent("iapguard.yml"))
        var postgresConfig = sqliteConfig
        postgresConfig.postgresStore = try TestPostgres.freshSettings("world")
        postgresConfig.reportsDirectory = dir.appendingPathComponent("reports-pg")
        let logger = Logger(label: "test")
        let run = Pipeline.Options(until: end, failOn: nil)
        let onSQLite = try Pipeline(
            config: sqliteConfig, verifier: try JWSVerifier.make(for: sqliteConfig), logger: logger
        )
        .run(run)
        let onPostgres = try Pipeline(
            config: postgresConfig, verifier: try JWSVerifier.make(for: postgresConfig), logger: logger
        ).run(run)
        #expect(onPostgres.errors.isEmpty)
        #expect(onPostgres.ruleErrors.isEmpty, "\(onPostgres.ruleErrors)")
        #expect(onPostgres.storeCounts == onSQLite.storeCounts)
        #expect(onPostgres.verification == onSQLite.verification)
        #expect(onPostgres.storePath.hasPrefix("postgres://"))
        let expected = try Self.comparableFindings(try #require(onSQLite.reportFolder))
        let actual = try Self.comparableFindings(try #require(onPostgres.reportFolder))
        #expect(expected.count > 20)
        #expect(actual.count == expected.count)
        for (a, b) in zip(actual, expected) where a != b {
            Issue.record("postgres: \(a)\nsqlite:   \(b)")
        }
        // A second run over the same data changes nothing and finds the same (now recurring) findings.
        let again = try Pipeline(
            config: postgresConfig, verifier: try JWSVerifier.make(for: postgresConfig), logger: logger
        ).run(run)
        #expect(again.sources.allSatisfy { $0.counts.inserted == 0 && $0.counts.updated == 0 })
        #expect(again.ruleStats.map(\.hits) == onPostgres.ruleStats.map(\.hits))
    }

    @Test func ordersStreamFromABackendPostgresQuery() throws {
        let settings = try TestPostgres.freshSettings("backend")
        let backend = try PostgresSession(settings: settings)
        try backend.execute(
            """
            CREATE TABLE shop_orders (id TEXT, uid TEXT, amount NUMERIC(10, 2), cur TEXT, made TIMESTAMPTZ, qty TEXT);
            INSERT INTO shop_orders VALUES
              ('o1', 'u1', 4.99, 'usd', '2026-05-01T10:00:00Z', '1'),
              ('o2', 'u2', 0.99, 'EUR', '2026-05-02T10:00:00Z', '2'),
              ('o3', 'u1', 9.99, 'USD', '2026-05-03T10:00:00Z', 'lots'),
              ('o4', 'u3', 1.00, 'USD', NULL, NULL),
              ('o5', 'u4', 2.50, 'GBP', '2026-05-05T10:00:00Z', '1')
            """)
        var source = Config.Source(
            name: "backend", kind: .orders, format: .postgres, path: TestScratch.root,
            query:
                "SELECT id AS order_id, uid AS user_id, amount AS price, cur AS currency, made AS created_at, qty AS quantity FROM shop_orders ORDER BY id;"
        )
        source.postgres = settings
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        var batches: [IngestBatch] = []
        _ = try SourceIngestor(source: source, verifier: UncheckedVerifier(), configHash: "h", batchSize: 2)
            .ingest(store: store, runID: 1, sink: { batches.append($0) })
        #expect(batches.count == 3)
        #expect(batches.allSatisfy { $0.recordCount <= 2 })
        let orders = batches.flatMap { $0.orders.map(\.order) }
        #expect(orders.map(\.orderID) == ["o1", "o2", "o5"])
        #expect(orders.first?.price == 4990)
        #expect(orders.first?.currency == "USD")
        #expect(orders.first?.createdAt == 1_777_629_600_000)
        #expect(orders.first?.quantity == 1)
        let quarantined = batches.flatMap(\.quarantined)
        // o3's quantity is not a number; o4 has no creation time (an order always has one).
        #expect(quarantined.map(\.location) == ["backend:row 3", "backend:row 4"])
        #expect(quarantined.first?.reason.contains("quantity") == true)
        #expect(quarantined.last?.reason.hasPrefix("created_at: missing") == true)

        var broken = source
        broken.query = "SELECT nope FROM shop_orders"
        #expect(throws: SourceError.self) {
            _ = try SourceIngestor(source: broken, verifier: UncheckedVerifier(), configHash: "h")
                .ingest(store: store, runID: 1, sink: { _ in })
        }
    }
}
