import Foundation
import Logging
import Testing

@testable import IAPGuard

/// Says why the PostgreSQL tests were skipped, and fails when CI asked for them (`IAPGUARD_TEST_PG=1`).
@Suite struct PostgresAvailabilityTests {
    @Test func postgresIsThereWhenCIAsksForIt() {
        if !TestPostgres.available {
            print("PostgreSQL tests skipped: \(TestPostgres.skipReason)")
        }
        #expect(TestPostgres.available || !TestPostgres.required, "IAPGUARD_TEST_PG=1 but \(TestPostgres.skipReason)")
    }
}

// The PostgreSQL tests need a server: a throwaway one started from Debian's binaries (see TestPostgres) or
// IAPGUARD_TEST_PG_URL. Without one they are skipped; PostgresAvailabilityTests prints why.
@Suite(.enabled(if: TestPostgres.available, "no PostgreSQL server for the tests (see PostgresAvailabilityTests)"))
struct PostgresStoreTests {
    static let views = [
        "transactions", "sightings", "orders", "credits", "notifications", "refunds", "apps", "catalog", "testers",
        "fx_rates", "runs", "findings", "finding_history", "rule_runs",
    ]

    @Test func migrationMakesTheSameViewsWithTheSameColumnsAsSQLite() throws {
        let postgres = try TestPostgres.freshStore("views")
        let sqlite = try SQLiteStore(path: ":memory:")
        try sqlite.migrate()
        for view in Self.views {
            #expect(try postgres.connection.columnNames(of: view) == sqlite.connection.columnNames(of: view), "\(view)")
        }
        #expect(try postgres.schemaVersion() == Schema.latestVersion)
        try postgres.migrate()  // idempotent
        #expect(try postgres.schemaVersion() == Schema.latestVersion)
    }

    /// Batches that exercise inserts, repeats inside a batch, updates with change-log entries, canonical
    /// precedence and failed sightings.
    static func batches() -> [IngestBatch] {
        func sighting(
            _ id: String, _ tx: String, status: VerificationOutcome.Status, signed: Int64, price: Int64 = 990,
            revoked: Int64? = nil
        ) -> AppleSighting {
            var t = AppleTransaction(transactionID: tx)
            t.originalTransactionID = tx
            t.bundleID = "com.example.coins"
            t.productID = "com.example.coins.pack100"
            t.quantity = 1
            t.purchaseDate = 1_780_000_000_000
            t.environment = "Production"
            t.storefront = "USA"
            t.currency = "USD"
            t.price = price
            t.signedDate = signed
            t.revocationDate = revoked
            var s = AppleSighting(
                transaction: t, sourceKind: .jws, sourceName: "signed", sourceRef: "tx.jsonl:\(id)",
                payloadHash: "hash-\(id)", verification: VerificationOutcome(status: status))
            s.receivedAt = signed
            return s
        }
        func order(_ id: String, user: String, status: String, tx: String?) -> BackendOrder {
            var o = BackendOrder(orderID: id)
            o.userID = user
            o.status = status
            o.transactionID = tx
            o.price = 990
            o.currency = "USD"
            o.createdAt = 1_780_000_000_000
            return o
        }
        func credit(_ id: String, tx: String, user: String, reversed: Int64? = nil, units: Int64 = 100) -> Credit {
            var c = Credit(creditID: id)
            c.transactionID = tx
            c.userID = user
            c.units = units
            c.creditedAt = 1_780_000_100_000
            c.reversedAt = reversed
            c.reversalReason = reversed == nil ? nil : "refund\twith\ttabs\nand a newline \\ backslash"
            return c
        }
        var first = IngestBatch()
        first.sightings = [
            sighting("s1", "1001", status: .unverified, signed: 10),
            sighting("s2", "1001", status: .verified, signed: 5),
            sighting("s3", "1002", status: .verified, signed: 7),
            sighting("s4", "1003", status: .failed, signed: 9),
            sighting("s3", "1002", status: .verified, signed: 7),
        ]
        first.orders = [
            (order("o1", user: "u1", status: "pending", tx: nil), "orders", "orders.csv:2"),
            (order("o2", user: "u2", status: "paid", tx: "1002"), "orders", "orders.csv:3"),
            (order("o1", user: "u1", status: "paid", tx: "1001"), "orders", "orders.csv:4"),
        ]
        first.credits = [
            (credit("c1", tx: "1001", user: "u1"), "credits", "credits.jsonl:1"),
            // A clawback ledger row, then the same row again in the batch.
            (credit("c1-back", tx: "1001", user: "u1", units: -50), "credits", "credits.jsonl:2"),
            (credit("c1-back", tx: "1001", user: "u1", units: -50), "credits", "credits.jsonl:2"),
        ]
        first.quarantined = [
            QuarantinedRecord(
                sourceName: "orders", location: "orders.csv:9", reason: "bad", rawExcerpt: "x", rawHash: "h9")
        ]
        var second = IngestBatch()
        second.sightings = [
            sighting("s5", "1002", status: .verified, signed: 20, revoked: 1_780_000_500_000),
            sighting("s6", "1004", status: .verified, signed: 21),
        ]
        second.orders = [(order("o2", user: "u2", status: "refunded", tx: "1002"), "orders", "orders.csv:3")]
        second.credits = [
            (credit("c1", tx: "1001", user: "u1", reversed: 1_780_000_600_000), "credits", "credits.jsonl:1"),
            (credit("c2", tx: "1002", user: "u2"), "credits", "credits.jsonl:2"),
            (credit("c2-back", tx: "1002", user: "u2", units: -100), "credits", "credits.jsonl:3"),
        ]
        return [first, second, first]
    }

    static func dump(_ store: any SQLBackedStore) throws -> [String] {
        var lines: [String] = []
        for (table, order) in [
            ("apple_transaction", "transaction_id"), ("apple_sighting", "sighting_id"), ("backend_order", "order_id"),
            ("credit", "credit_id"), ("credit_clawback", "credit_id"), ("quarantine", "location"),
            ("change_log", "entity, entity_key, field, old_value, new_value"),
        ] {
            let columns = try store.connection.columnNames(of: table).filter {
                $0 != "change_id" && $0 != "quarantine_id"
            }
            for row in try store.rows("SELECT \(columns.joined(separator: ", ")) FROM \(table) ORDER BY \(order)") {
                lines.append(table + ": " + row.map { $0.textValue ?? "NULL" }.joined(separator: "|"))
            }
        }
        return lines
    }

    @Test func clawbackRowsReverseTheSameCreditsAsOnSQLite() throws {
        var stores = 0
        try CreditClawbackTests.checkLedger(on: {
            stores += 1
            return try TestPostgres.freshStore("clawback\(stores)")
        })
    }

    @Test func creditsAreLinkedThroughTheirOrderAsOnSQLite() throws {
        var stores = 0
        try CreditOrderLinkTests.checkLinks(on: {
            stores += 1
            return try TestPostgres.freshStore("orderlink\(stores)")
        })
    }

    @Test func creditsAreLinkedThroughTheCopiesSubmittedWithTheirOrderAsOnSQLite() throws {
        var stores = 0
        try CreditOrderLinkTests.checkSubmittedLinks(on: {
            stores += 1
            return try TestPostgres.freshStore("submittedlink\(stores)")
        })
    }

    @Test func theGracePeriodExpiryIsStoredAndFilledInAsOnSQLite() throws {
        var stores = 0
        try GracePeriodColumnTests.checkGracePeriodColumn(on: {
            stores += 1
            return try TestPostgres.freshStore("grace\(stores)")
        })
    }

    @Test func copyAndRowByRowWritesMatchSQLiteRowForRow() throws {
        let sqlite = try SQLiteStore(path: ":memory:")
        try sqlite.migrate()
        let copying = try TestPostgres.freshStore("copy")
        let rowByRow = try TestPostgres.freshStore("rows")
        rowByRow.usesCopy = false
        var counts: [[WriteCounts]] = [[], [], []]
        let stores: [any SQLBackedStore] = [sqlite, copying, rowByRow]
        for (index, store) in stores.enumerated() {
            let runID = try store.beginRun(
                RunStart(startedAt: 1, windowSince: nil, windowUntil: nil, configHash: "h", toolVersion: "t"))
            for batch in Self.batches() { counts[index].append(try store.write(batch, runID: runID)) }
        }
        let expected = try Self.dump(sqlite)
        #expect(expected.contains { $0.hasPrefix("change_log: ") })
        for (name, store) in [("copy", copying), ("row by row", rowByRow)] {
            let actual = try Self.dump(store)
            #expect(actual.count == expected.count, "\(name)")
            for line in Set(actual).symmetricDifference(expected).sorted() {
                Issue.record("\(name): \(expected.contains(line) ? "missing" : "extra"): \(line)")
            }
        }
        #expect(counts[1] == counts[0])
        #expect(counts[2] == counts[0])
        #expect(counts[0][2].inserted == 0)
    }

    @Test func everyInlineRuleTestPassesOnPostgres() throws {
        let (rules, errors) = RuleSet.load(from: Fixtures.repoRoot.appendingPathComponent("rules"))
        #expect(errors.isEmpty)
        #expect(rules.count >= 20)
        var tester = RuleTester()
        tester.makeStore = { try TestPostgres.freshStore("rule") }
        let results = tester.run(rules)
        #expect(!results.isEmpty)
        for result in results where !result.passed { Issue.record("\(result)") }
    }

    @Test func rulesValidatePlansEveryQueryOnPostgres() throws {
        let (rules, _) = RuleSet.load(from: Fixtures.repoRoot.appendingPathComponent("rules"))
        let issues = try RuleValidator(postgres: TestPostgres.freshSettings("validate"))
            .validate(rules, now: 1_780_000_000_000)
        let errors = issues.filter { $0.severity == .error }
        #expect(errors.isEmpty, "\(errors.map(\.description).joined(separator: "\n"))")
        // A query that only SQLite accepts is caught.
        var broken = try #require(rules.first)
        broken.query = "SELECT transaction_id, 1 FROM transactions WHERE transaction_id GLOB '1*'"
        let found = try PostgresRuleCheck(settings: TestPostgres.freshSettings("validate")).check(broken)
        #expect(!found.isEmpty)
    }

    @Test func aFailingRuleInsideTheRunTransactionDoesNotStopTheOthersOnPostgres() throws {
        let (rules, _) = RuleSet.load(from: Fixtures.repoRoot.appendingPathComponent("rules"))
        var good = try #require(rules.first { $0.id == "IAP-004" })
        good.query = "SELECT 'com.example.other' AS bundle_id, 'x' AS transaction_id"
        good.entityKey = ["transaction_id"]
        var bad = good
        bad.id = "IAP-900"
        // Plans fine, fails while running: PostgreSQL then refuses the transaction's later statements
        // unless the failed query ran in a savepoint.
        bad.query = "SELECT CAST(summary AS INTEGER) AS transaction_id FROM (SELECT 'not a number' AS summary) t"
        let store = try TestPostgres.freshStore("failingrule")
        let engine = RuleEngine(store: store, referenceCurrency: "USD")
        engine.usesStoredFindings = false
        let result = try store.inTransaction {
            let result = try engine.evaluate(rules: [bad, good], runID: 1, now: 1_780_000_000_000)
            // The transaction is still usable after the failure.
            #expect(try store.scalar("SELECT 1")?.integerValue == 1)
            return result
        }
        #expect(result.stats.first { $0.ruleID == "IAP-900" }?.error != nil)
        #expect(result.stats.first { $0.ruleID == "IAP-004" }?.error == nil)
        #expect(result.findings.map(\.ruleID) == ["IAP-004"])
    }
}
