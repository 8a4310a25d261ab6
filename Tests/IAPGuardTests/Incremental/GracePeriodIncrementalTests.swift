import Foundation
import Logging
import Testing

@testable import IAPGuard
@testable import IAPGuardTesting

/// Grace days credited before Apple's notification of the Billing Grace Period reaches the store are a
/// duplicate (IAP-001) and an over-credit (IAP-019) until it does; the daily run that ingests the notification
/// evaluates the purchase again incrementally (the notification scopes every transaction of its original) and
/// resolves both findings, as a full evaluation would.
@Suite struct GracePeriodIncrementalTests {
    typealias World = VerifyTestWorld
    static let day: Int64 = 86_400_000
    static let purchase: Int64 = TimeParser.epochMillis("2026-10-10T09:00:00Z") ?? 0
    static let expires = purchase + 7 * day
    static let grace = expires + 3 * day
    static let transactionID = "3000000000000001"
    static let product = "com.example.coins.plus.weekly"

    static func transaction() -> Data {
        World.json([
            "transactionId": transactionID, "originalTransactionId": transactionID, "bundleId": "com.example.coins",
            "productId": product, "type": "Auto-Renewable Subscription", "quantity": 1, "purchaseDate": purchase,
            "originalPurchaseDate": purchase, "expiresDate": expires, "signedDate": purchase + 2000,
            "environment": "Production", "storefront": "USA", "currency": "USD", "price": 2990,
            "inAppOwnershipType": "PURCHASED", "transactionReason": "PURCHASE",
        ])
    }

    /// Apple's DID_FAIL_TO_RENEW (GRACE_PERIOD) for the week's transaction, with the grace period's end.
    static func gracePeriodNotification() throws -> String {
        let renewal = World.json([
            "originalTransactionId": transactionID, "autoRenewProductId": product, "productId": product,
            "autoRenewStatus": 1, "environment": "Production", "signedDate": expires + 60_000,
            "isInBillingRetryPeriod": true, "gracePeriodExpiresDate": grace,
        ])
        let data: [String: Any] = [
            "bundleId": "com.example.coins", "environment": "Production", "appAppleId": 42,
            "signedTransactionInfo": try World.good.sign(payload: transaction()),
            "signedRenewalInfo": try World.good.sign(payload: renewal),
        ]
        let payload = World.json([
            "notificationType": "DID_FAIL_TO_RENEW", "subtype": "GRACE_PERIOD",
            "notificationUUID": "00000000-0000-4000-8000-000000000091", "signedDate": expires + 60_000,
            "version": "2.0", "data": data,
        ])
        return String(decoding: World.json(["signedPayload": try World.good.sign(payload: payload)]), as: UTF8.self)
    }

    static func config(_ world: IngestTestWorld) throws -> Config {
        let yaml = """
            store: state/store.sqlite
            rules: \(Fixtures.repoRoot.appendingPathComponent("rules").path)
            apps:
              - bundle_id: com.example.coins
                app_apple_id: 42
                environments: [Production]
                products:
                  - {product_id: \(product), type: Auto-Renewable Subscription, units: 7, price: "2.99", currency: USD}
            sources:
              - {name: signed, kind: signed-transactions, format: jsonl, path: data/transactions.jsonl}
              - {name: asn2, kind: notifications, format: jsonl, path: data/notifications.jsonl}
              - {name: credits, kind: credits, format: jsonl, path: data/credits.jsonl}
            """
        let url = world.directory.appendingPathComponent("iapguard.yml")
        try Data(yaml.utf8).write(to: url)
        return try Config.load(from: url)
    }

    /// `rule_id status` of the findings of IAP-001 and IAP-019, and the entity each names.
    static func findings(_ world: IngestTestWorld, _ config: Config) throws -> [[String?]] {
        try world.rows(
            config,
            """
            SELECT rule_id, status, COALESCE(transaction_id, '') || '/' || entity_key FROM findings
            WHERE rule_id IN ('IAP-001', 'IAP-019') ORDER BY rule_id
            """)
    }

    @Test func aGracePeriodNotificationArrivingAfterTheGraceDaysResolvesTheirFindingsIncrementally() throws {
        let world = try IngestTestWorld()
        defer { try? FileManager.default.removeItem(at: world.directory) }
        let config = try Self.config(world)
        let signed = try World.good.sign(payload: Self.transaction())
        try world.write("transactions.jsonl", #"{"signedTransactionInfo":"\#(signed)","user_id":"u-1"}"# + "\n")
        try world.write(
            "credits.jsonl",
            """
            {"credit_id":"c-week","transaction_id":"\(Self.transactionID)","user_id":"u-1","product_id":"\(Self.product)","units":7,"credited_at":\(Self.purchase + 7000)}
            {"credit_id":"c-grace","transaction_id":"\(Self.transactionID)","user_id":"u-1","product_id":"\(Self.product)","units":3,"credited_at":\(Self.expires + 120_000)}

            """)
        try world.write("notifications.jsonl", "")
        let pipeline = Pipeline(
            config: config, verifier: try World.verifier(environments: [.production]),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))

        // Day 1: the grace days stand, Apple's notification has not come yet.
        _ = try pipeline.run(Pipeline.Options(until: Self.expires + Self.day, failOn: nil))
        let before = try Self.findings(world, config)
        #expect(before.map { [$0[0], $0[1]] } == [["IAP-001", "new"], ["IAP-019", "new"]], "\(before)")

        // Day 2: the notification arrives; nothing else changes. Both rules run on the scope it brings in.
        try world.write("notifications.jsonl", try Self.gracePeriodNotification() + "\n")
        let summary = try pipeline.run(Pipeline.Options(until: Self.expires + 2 * Self.day, failOn: nil))
        #expect(summary.ruleModes["IAP-001"] == "incremental")
        #expect(summary.ruleModes["IAP-019"] == "incremental")
        #expect(
            try world.rows(config, "SELECT grace_period_expires_date FROM notifications") == [[String(Self.grace)]])
        let after = try Self.findings(world, config)
        #expect(after.map { [$0[0], $0[1]] } == [["IAP-001", "resolved"], ["IAP-019", "resolved"]], "\(after)")
    }
}
