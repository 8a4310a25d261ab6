import Foundation
import Testing

@testable import IAPGuard

/// A subscription Apple ended early because the user upgraded it carries a cancellation (legacy) or
/// revocation (JWS) date that is not a refund: ingest labels it, and the `refunds` view and the lookup say
/// "upgrade", so no refund rule counts it.
@Suite struct SubscriptionUpgradeTests {
    static func legacy(_ entry: String) throws -> AppleTransaction {
        let line =
            #"{"status":0,"environment":"Production","receipt":{"bundle_id":"com.example.coins","in_app":[{"#
            + #""quantity":"1","product_id":"com.example.coins.plus.monthly","transaction_id":"2000000000000007","#
            + #""purchase_date_ms":"1788220800000","cancellation_date_ms":"1788480000000""# + entry + "}]}}"
        let object = try JSONObject.parse(Array(line.utf8))
        let sightings = try ReceiptResponseParser(sourceName: "r").parse(object, payloadHash: "h", location: "r:1")
        return try #require(sightings.first).transaction
    }

    static func signed(_ fields: String) throws -> AppleTransaction {
        let text =
            #"{"transactionId":"2000000000000007","productId":"com.example.coins.plus.monthly","#
            + #""purchaseDate":1788220800000,"revocationDate":1788480000000"# + fields + "}"
        return try SignedTransactionParser.transaction(from: JSONObject.parse(Array(text.utf8)))
    }

    @Test func aLegacyCancellationMarkedIsUpgradedIsAnUpgradeAndAnyOtherIsARefund() throws {
        #expect(try Self.legacy(#","is_upgraded":"true""#).revocationType == "UPGRADE")
        #expect(try Self.legacy(#","is_upgraded":true"#).revocationType == "UPGRADE")
        #expect(try Self.legacy(#","is_upgraded":"false""#).revocationType == nil)
        #expect(try Self.legacy(#","cancellation_reason":"0""#).revocationType == nil)
        #expect(try Self.legacy("").revocationDate == 1_788_480_000_000)
    }

    @Test func aSignedRevocationOfAnUpgradedSubscriptionIsAnUpgradeUnlessAppleGivesARefundReasonOrType() throws {
        #expect(try Self.signed(#","isUpgraded":true"#).revocationType == "UPGRADE")
        #expect(try Self.signed(#","isUpgraded":false"#).revocationType == nil)
        #expect(try Self.signed(#","isUpgraded":true,"revocationReason":1"#).revocationType == nil)
        #expect(try Self.signed(#","isUpgraded":true,"revocationType":"REFUND_FULL""#).revocationType == "REFUND_FULL")
        #expect(try Self.signed("").revocationType == nil)
    }

    @Test func aRevokedConsumableOrNonConsumableMarkedIsUpgradedIsStillARefund() throws {
        // Only an auto-renewable subscription moves to a higher plan: Apple's `type` says what was bought.
        #expect(try Self.signed(#","isUpgraded":true,"type":"Consumable""#).revocationType == nil)
        #expect(try Self.signed(#","isUpgraded":true,"type":"Non-Consumable""#).revocationType == nil)
        #expect(try Self.signed(#","isUpgraded":true,"type":"Non-Renewing Subscription""#).revocationType == nil)
        #expect(
            try Self.signed(#","isUpgraded":true,"type":"Auto-Renewable Subscription""#).revocationType == "UPGRADE")
    }

    @Test func isUpgradedOfAnotherJSONTypeIsASchemaError() throws {
        #expect(throws: RecordError.self) { try Self.signed(#","isUpgraded":"true""#) }
        #expect(throws: RecordError.self) { try Self.signed(#","isUpgraded":1"#) }
    }

    @Test func theUpgradeLabelLeavesTheSightingIDAsItWas() throws {
        func sightingID(_ t: AppleTransaction) -> String {
            AppleSighting(
                transaction: t, sourceKind: .receipt, sourceName: "r", sourceRef: "r:1", payloadHash: "h",
                verification: VerificationOutcome(status: .notSigned)
            ).sightingID
        }
        var upgraded = try Self.legacy(#","is_upgraded":"true""#)
        #expect(upgraded.revocationType == "UPGRADE")
        let labelled = sightingID(upgraded)
        upgraded.revocationType = nil
        #expect(labelled == sightingID(upgraded))
        upgraded.revocationType = "REFUND_FULL"
        #expect(labelled != sightingID(upgraded))
    }

    @Test func theRefundsViewCallsAnUpgradeAnUpgradeAndARefundARefund() throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        var upgraded = try Self.legacy(#","is_upgraded":"true""#)
        upgraded.transactionID = "2000000000000007"
        var refunded = try Self.legacy(#","cancellation_reason":"0""#)
        refunded.transactionID = "2000000000000008"
        var batch = IngestBatch()
        for t in [upgraded, refunded] {
            batch.sightings.append(
                AppleSighting(
                    transaction: t, sourceKind: .receipt, sourceName: "r", sourceRef: "r:\(t.transactionID)",
                    payloadHash: t.transactionID, verification: VerificationOutcome(status: .notSigned)))
        }
        _ = try store.write(batch, runID: 1)
        let events = try store.database.query(
            "SELECT transaction_id, event_type FROM refunds ORDER BY transaction_id"
        ).map { [$0[0].textValue ?? "", $0[1].textValue ?? ""] }
        #expect(events == [["2000000000000007", "UPGRADE"], ["2000000000000008", "REFUND"]])
    }

    @Test func aLegacyCancellationMarkedIsUpgradedIsARefundForAProductTheCatalogSaysIsNoSubscription() throws {
        // A legacy receipt names no type: the catalog does. Only an auto-renewable subscription is upgraded;
        // a consumable's cancellation marked `is_upgraded` hides a refund. A product the catalog lacks keeps
        // the label (as a subscription's would).
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        for (product, type) in [
            ("com.example.coins.pack6500", "Consumable"),
            ("com.example.coins.plus.monthly", "Auto-Renewable Subscription"),
        ] {
            try store.database.run(
                "INSERT INTO ref_product (bundle_id, product_id, type, units) VALUES ('com.example.coins', ?, ?, 1)",
                [.text(product), .text(type)])
        }
        var batch = IngestBatch()
        for (id, product) in [
            ("2000000000000021", "com.example.coins.pack6500"), ("2000000000000022", "com.example.coins.plus.monthly"),
            ("2000000000000023", "com.example.coins.unknown"),
        ] {
            var t = try Self.legacy(#","is_upgraded":"true""#)
            #expect(t.revocationType == "UPGRADE")
            t.transactionID = id
            t.productID = product
            batch.sightings.append(
                AppleSighting(
                    transaction: t, sourceKind: .receipt, sourceName: "r", sourceRef: "r:\(id)", payloadHash: id,
                    verification: VerificationOutcome(status: .notSigned)))
        }
        _ = try store.write(batch, runID: 1)
        let events = try store.database.query(
            "SELECT transaction_id, event_type FROM refunds ORDER BY transaction_id"
        ).map { [$0[0].textValue ?? "", $0[1].textValue ?? ""] }
        #expect(
            events == [
                ["2000000000000021", "REFUND"], ["2000000000000022", "UPGRADE"], ["2000000000000023", "UPGRADE"],
            ])
    }
}
