import Foundation
import Testing

@testable import IAPGuard

/// The end of a subscription's Billing Grace Period (`gracePeriodExpiresDate` of the renewal info) is a
/// column of the `notifications` view: written with each notification, and filled in by schema migration 29
/// for the notifications a store held before it (store level).
@Suite struct GracePeriodColumnTests {
    static let expires: Int64 = 1_790_000_000_000
    static let grace: Int64 = expires + 3 * 86_400_000

    static func notification(_ uuid: String, renewalInfo: String?, grace: Int64?) -> AppleNotification {
        var n = AppleNotification(notificationUUID: uuid)
        n.notificationType = "DID_FAIL_TO_RENEW"
        n.subtype = "GRACE_PERIOD"
        n.signedDate = expires + 60_000
        n.environment = "Production"
        n.bundleID = "com.example.coins"
        n.transactionID = "3000000000000001"
        n.originalTransactionID = "3000000000000001"
        n.renewalInfo = renewalInfo
        n.gracePeriodExpiresDate = grace
        n.verification = .verified
        n.sourceName = "asn2"
        n.sourceRef = "notifications.jsonl:\(uuid)"
        n.payloadHash = "h-\(uuid)"
        return n
    }

    /// `notification_uuid: grace_period_expires_date` of every notification, through the view.
    static func graceByNotification(_ store: any SQLBackedStore) throws -> [String: Int64?] {
        var result: [String: Int64?] = [:]
        for row in try store.rows("SELECT notification_uuid, grace_period_expires_date FROM notifications") {
            result[row[0].textValue ?? ""] = row[1].integerValue
        }
        return result
    }

    /// Takes a migrated store back to schema 28: no grace column, index or view column, migration 29 not
    /// applied.
    static func backToVersion28(_ store: any SQLBackedStore) throws {
        for statement in [
            "DROP VIEW notifications", "DROP INDEX notification_grace_period",
            "ALTER TABLE notification DROP COLUMN grace_period_expires_date",
            "CREATE VIEW notifications AS SELECT notification_uuid, renewal_info FROM notification",
            "DELETE FROM schema_migration WHERE version = 29",
        ] {
            try store.connection.execute(statement)
        }
    }

    /// The whole behaviour on one store (also run on PostgreSQL by `PostgresStoreTests`).
    static func checkGracePeriodColumn(on makeStore: () throws -> any SQLBackedStore) throws {
        let reported = #"{"originalTransactionId":"3000000000000001","gracePeriodExpiresDate":\#(grace)}"#
        var batch = IngestBatch()
        batch.notifications = [
            notification("n-grace", renewalInfo: reported, grace: grace),
            notification("n-none", renewalInfo: #"{"originalTransactionId":"3000000000000001"}"#, grace: nil),
        ]
        let store = try makeStore()
        try LedgerPassRuns.runs([batch], on: store) { _, _ in }
        #expect(try graceByNotification(store) == ["n-grace": grace, "n-none": nil])

        // A store upgraded from schema 28: the migration reads each stored renewal info as ingest does (a string
        // of digits too); a value that is no whole number, or no such field, leaves the column empty.
        let upgraded = try makeStore()
        try backToVersion28(upgraded)
        let runID = try upgraded.beginRun(
            RunStart(startedAt: 1, windowSince: nil, windowUntil: nil, configHash: "h", toolVersion: "t"))
        for (uuid, info) in [
            ("n-number", reported), ("n-digits", #"{"gracePeriodExpiresDate":"\#(grace)"}"#),
            ("n-text", #"{"gracePeriodExpiresDate":"soon"}"#), ("n-none", #"{"autoRenewStatus":0}"#),
            ("n-empty", nil),
        ] {
            try upgraded.connection.run(
                """
                INSERT INTO notification (notification_uuid, verification, source_name, source_ref, payload_hash,
                                          first_run_id, renewal_info)
                VALUES (?, 'verified', 'asn2', ?, ?, ?, ?)
                """,
                [.text(uuid), .text("notifications.jsonl:\(uuid)"), .text("h-\(uuid)"), .integer(runID), .of(info)])
        }
        try upgraded.migrate()
        #expect(try upgraded.schemaVersion() == Schema.latestVersion)
        #expect(
            try graceByNotification(upgraded) == [
                "n-number": grace, "n-digits": grace, "n-text": nil, "n-none": nil, "n-empty": nil,
            ])
    }

    @Test func theGracePeriodExpiryIsStoredWithTheNotificationAndFilledInForAnUpgradedStore() throws {
        try Self.checkGracePeriodColumn(on: { try LedgerPassRuns.memoryStore() })
    }

    /// Rules look a purchase's grace period up by its original transaction through the partial index, which
    /// holds only the notifications that report one.
    @Test func theGracePeriodIsLookedUpByOriginalTransactionThroughItsPartialIndex() throws {
        let store = try LedgerPassRuns.memoryStore()
        let plan = try store.database.query(
            """
            EXPLAIN QUERY PLAN
            SELECT MAX(grace_period_expires_date) FROM notifications
            WHERE original_transaction_id = ? AND grace_period_expires_date > ?
            """, [.text("3000000000000001"), .integer(Self.expires)]
        ).compactMap { $0.last?.textValue }
        #expect(plan.contains { $0.contains("USING COVERING INDEX notification_grace_period") }, "\(plan)")
    }
}
