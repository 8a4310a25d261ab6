import Foundation
import Testing

@testable import IAPGuard

/// Apple's newest signed copy of a transaction decides its revocation fields, and a reversed refund stays
/// reversed whatever order the copies and notifications arrive in (store level, every write path).
@Suite struct RefundReversalTests {
    static let tx = "7000000000000001"
    /// The refund, 50 s after the purchase (the copies are signed 1 to 400 s after it).
    static let refundedAt: Int64 = 1_780_000_050_000

    /// A copy of the transaction signed at `signed` (seconds after the purchase), revoked or not.
    static func copy(
        _ label: String, signed: Int64, revoked: Bool, kind: AppleSighting.SourceKind = .notification,
        revokedAt: Int64 = refundedAt
    ) -> AppleSighting {
        var t = AppleTransaction(transactionID: tx)
        t.originalTransactionID = tx
        t.bundleID = "com.example.coins"
        t.productID = "com.example.coins.pack100"
        t.quantity = 1
        t.purchaseDate = 1_780_000_000_000
        t.environment = "Production"
        t.price = 990
        t.currency = "USD"
        t.signedDate = 1_780_000_000_000 + signed * 1000
        if revoked {
            t.revocationDate = revokedAt
            t.revocationReason = 1
            t.revocationType = "REFUND_FULL"
            t.revocationPercentage = 100_000
        }
        return AppleSighting(
            transaction: t, sourceKind: kind, sourceName: "apple", sourceRef: "copy \(label)",
            payloadHash: "hash-\(label)", verification: VerificationOutcome(status: .verified))
    }

    /// A verified notification about the transaction with its nested copy.
    static func notification(_ type: String, signed: Int64, nestedRevoked: Bool) -> IngestBatch {
        let nested = copy(type, signed: signed, revoked: nestedRevoked)
        var n = AppleNotification(notificationUUID: "uuid-\(type)-\(signed)")
        n.notificationType = type
        n.signedDate = nested.transaction.signedDate
        n.transactionID = tx
        n.originalTransactionID = tx
        n.bundleID = "com.example.coins"
        n.environment = "Production"
        n.revocationDate = nested.transaction.revocationDate
        n.revocationReason = nested.transaction.revocationReason
        n.verification = VerificationOutcome(status: .verified)
        n.sourceName = "apple"
        n.sourceRef = "notification \(type)"
        n.payloadHash = "n-\(type)-\(signed)"
        var batch = IngestBatch()
        batch.notifications = [n]
        batch.sightings = [nested]
        return batch
    }

    static func single(_ sighting: AppleSighting) -> IngestBatch {
        var batch = IngestBatch()
        batch.sightings = [sighting]
        return batch
    }

    static let refund = notification("REFUND", signed: 100, nestedRevoked: true)
    static let reversal = notification("REFUND_REVERSED", signed: 200, nestedRevoked: false)
    /// A reversal whose nested copy still carries the revocation: the notification itself clears it.
    static let reversalKeepingFields = notification("REFUND_REVERSED", signed: 200, nestedRevoked: true)
    static let resigned = single(copy("history", signed: 300, revoked: false, kind: .api))
    static let purchaseCopy = single(copy("purchase", signed: 1, revoked: false, kind: .jws))

    /// Every arrival order of the refund and what reversed it, each ending reversed.
    static let reversedOrders: [(String, [IngestBatch])] = [
        ("refund, reversal", [refund, reversal]),
        ("reversal, refund", [reversal, refund]),
        ("refund, reversal keeping the fields", [refund, reversalKeepingFields]),
        ("reversal keeping the fields, refund", [reversalKeepingFields, refund]),
        ("refund, re-signed copy", [refund, resigned]),
        ("re-signed copy, refund", [resigned, refund]),
        ("purchase copy, refund, reversal", [purchaseCopy, refund, reversal]),
        ("reversal, purchase copy, refund", [reversal, purchaseCopy, refund]),
    ]

    /// The store's verdict on the transaction: its revocation fields, the transaction-half refund rows, and
    /// the latest refund event (a reversal wins a tie, as the rules order them).
    static func verdict(_ store: any SQLBackedStore) throws -> (fields: [String], transactionRows: Int, latest: String?)
    {
        let fields =
            try store.rows(
                "SELECT revocation_date, revocation_reason, revocation_type, revocation_percentage FROM transactions WHERE transaction_id = :id",
                ["id": .text(tx)]
            ).first?.map { $0.textValue ?? "NULL" } ?? []
        let transactionRows =
            try store.scalar(
                "SELECT COUNT(*) FROM refunds WHERE transaction_id = :id AND event_id LIKE 'transaction:%'",
                ["id": .text(tx)])?.integerValue ?? -1
        let latest = try store.rows(
            """
            SELECT event_type FROM refunds WHERE transaction_id = :id AND event_type IN ('REFUND', 'REVOKE', 'REFUND_REVERSED')
            ORDER BY event_date DESC, CASE event_type WHEN 'REFUND_REVERSED' THEN 0 ELSE 1 END LIMIT 1
            """, ["id": .text(tx)]
        ).first?.first?.textValue
        return (fields, Int(transactionRows), latest)
    }

    static func write(_ batches: [IngestBatch], to store: any SQLBackedStore, rowByRow: Bool = false) throws {
        let runID = try store.beginRun(
            RunStart(startedAt: 1, windowSince: nil, windowUntil: nil, configHash: "h", toolVersion: "t"))
        for batch in batches {
            _ = rowByRow ? try store.writeRowByRow(batch, runID: runID) : try store.write(batch, runID: runID)
        }
    }

    @Test(arguments: [false, true])
    func aReversedRefundStaysReversedInEveryArrivalOrder(rowByRow: Bool) throws {
        for (name, batches) in Self.reversedOrders {
            let store = try SQLiteStore(path: ":memory:")
            try store.migrate()
            try Self.write(batches, to: store, rowByRow: rowByRow)
            let verdict = try Self.verdict(store)
            #expect(verdict.fields == ["NULL", "NULL", "NULL", "NULL"], "\(name)")
            #expect(verdict.transactionRows == 0, "\(name)")
            #expect(verdict.latest == "REFUND_REVERSED", "\(name)")
            // Idempotent: the same input again changes nothing.
            let before = try PostgresStoreTests.dump(store)
            try Self.write(batches, to: store, rowByRow: rowByRow)
            #expect(try PostgresStoreTests.dump(store) == before, "\(name)")
        }
    }

    @Test func aRefundStandsAndARefundAfterTheReversalStandsAgain() throws {
        let again = Self.single(
            Self.copy("refund again", signed: 400, revoked: true, kind: .api, revokedAt: 1_780_000_350_000))
        for (name, batches) in [
            ("refund", [Self.refund]), ("older reversal is history", [Self.reversal, Self.refund, again]),
            ("purchase copy then refund", [Self.purchaseCopy, Self.refund]),
        ] {
            let store = try SQLiteStore(path: ":memory:")
            try store.migrate()
            try Self.write(batches, to: store)
            let verdict = try Self.verdict(store)
            #expect(verdict.fields.count == 4 && !verdict.fields.contains("NULL"), "\(name)")
            #expect(verdict.transactionRows == 1, "\(name)")
            #expect(verdict.latest == "REFUND", "\(name)")
        }
    }

    @Test func clearingARevocationIsLoggedAndMarksTheTransactionChanged() throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        try Self.write([Self.refund], to: store)
        let runID = try store.beginRun(
            RunStart(startedAt: 2, windowSince: nil, windowUntil: nil, configHash: "h", toolVersion: "t"))
        _ = try store.write(Self.reversal, runID: runID)
        let changes = try store.rows(
            "SELECT field, old_value, new_value FROM change_log WHERE entity = 'transaction' AND run_id = :run ORDER BY field",
            ["run": .integer(runID)]
        ).map { $0.map { $0.textValue ?? "NULL" } }
        #expect(changes.contains(["revocation_date", String(Self.refundedAt), "NULL"]))
        #expect(changes.contains(["revocation_type", "REFUND_FULL", "NULL"]))
        #expect(try store.scalar("SELECT last_run_id FROM transactions")?.integerValue == runID)
    }
}

// The same orders on PostgreSQL (COPY and row by row) leave the same rows as SQLite.
@Suite(.enabled(if: TestPostgres.available, "no PostgreSQL server for the tests (see PostgresAvailabilityTests)"))
struct PostgresRefundReversalTests {
    @Test func everyArrivalOrderEndsAsOnSQLite() throws {
        for (index, (name, batches)) in RefundReversalTests.reversedOrders.enumerated() {
            let sqlite = try SQLiteStore(path: ":memory:")
            try sqlite.migrate()
            try RefundReversalTests.write(batches, to: sqlite)
            let copying = try TestPostgres.freshStore("reversal\(index)c")
            let rowByRow = try TestPostgres.freshStore("reversal\(index)r")
            rowByRow.usesCopy = false
            for store in [copying, rowByRow] {
                try RefundReversalTests.write(batches, to: store)
                let verdict = try RefundReversalTests.verdict(store)
                #expect(verdict.fields == ["NULL", "NULL", "NULL", "NULL"], "\(name)")
                #expect(verdict.latest == "REFUND_REVERSED", "\(name)")
                let expected = try PostgresStoreTests.dump(sqlite)
                #expect(try PostgresStoreTests.dump(store).count == expected.count, "\(name)")
                for line in Set(try PostgresStoreTests.dump(store)).symmetricDifference(expected).sorted() {
                    Issue.record("\(name): \(expected.contains(line) ? "missing" : "extra"): \(line)")
                }
            }
        }
    }
}
