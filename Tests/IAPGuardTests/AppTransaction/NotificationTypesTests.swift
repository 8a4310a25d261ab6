import Foundation
import Testing

@testable import IAPGuard
@testable import IAPGuardTesting

/// The notification types Apple added for one-time charges, Advanced Commerce subscriptions (metadata
/// changes, migrations, price changes) and consent, and any type or subtype Apple adds later: signed by the
/// test chain, verified with their nested payloads, ingested through the pipeline and stored as they came.
@Suite struct NotificationTypesTests {
    typealias World = VerifyTestWorld

    /// A transaction of the Advanced Commerce subscription `id`, with an offer and an item refund.
    static func transaction(_ id: String, offerType: Int = 4) -> Data {
        World.json([
            "transactionId": id, "originalTransactionId": "2100000000000001", "bundleId": "com.example.coins",
            "productId": "com.example.coins.vip", "environment": "Production", "type": "Auto-Renewable Subscription",
            "quantity": 1, "purchaseDate": 1_716_000_000_000, "signedDate": World.signedDate, "price": 4990,
            "currency": "USD", "storefront": "USA", "offerType": offerType, "offerIdentifier": "come-back-50",
            "offerDiscountType": "PAY_AS_YOU_GO", "offerPeriod": "P3M", "appTransactionId": "704289572311899999",
            "advancedCommerceInfo": [
                "items": [
                    [
                        "SKU": "vip.addon", "price": 990,
                        "refunds": [
                            [
                                "refundAmount": 990, "refundDate": 1_716_500_000_000,
                                "refundReason": "UNSATISFIED_RESOURCE", "refundType": "FULL",
                            ]
                        ],
                    ]
                ]
            ],
        ])
    }

    static func notification(
        type: String, subtype: String?, uuid: String, transactionID: String?, renewal: Bool = true,
        appTransaction: Bool = false, extra: [String: Any] = [:]
    ) throws -> String {
        var data: [String: Any] = ["bundleId": "com.example.coins", "environment": "Production", "appAppleId": 42]
        if let transactionID {
            data["signedTransactionInfo"] = try World.good.sign(payload: transaction(transactionID))
        }
        if renewal { data["signedRenewalInfo"] = try World.good.sign(payload: World.renewal()) }
        var object: [String: Any] = [
            "notificationType": type, "notificationUUID": uuid, "signedDate": World.signedDate, "version": "2.0",
        ]
        if let subtype { object["subtype"] = subtype }
        if appTransaction {
            data["signedAppTransactionInfo"] = try World.good.sign(payload: AppTransactionIDTests.appTransaction())
            data.removeValue(forKey: "signedRenewalInfo")
            object["appData"] = data
        } else {
            object["data"] = data
        }
        for (key, value) in extra { object[key] = value }
        let signed = try World.good.sign(payload: World.json(object))
        return String(decoding: World.json(["signedPayload": signed]), as: UTF8.self)
    }

    /// Type, subtype, uuid and the transaction each notification carries (nil: none).
    static let cases: [(String, String?, String, String?)] = [
        ("ONE_TIME_CHARGE", nil, "00000000-0000-4000-8000-000000000001", "2100000000000011"),
        ("METADATA_UPDATE", nil, "00000000-0000-4000-8000-000000000002", "2100000000000012"),
        ("MIGRATION", nil, "00000000-0000-4000-8000-000000000003", "2100000000000013"),
        ("PRICE_CHANGE", "PENDING", "00000000-0000-4000-8000-000000000004", "2100000000000014"),
        ("SUBSCRIBED", "RESUBSCRIBE", "00000000-0000-4000-8000-000000000005", "2100000000000015"),
        ("OFFER_REDEEMED", "WIN_BACK_OFFER", "00000000-0000-4000-8000-000000000006", "2100000000000016"),
        ("SOME_FUTURE_TYPE", "SOME_FUTURE_SUBTYPE", "00000000-0000-4000-8000-000000000007", nil),
    ]

    @Test func everyNewTypeVerifiesWithItsNestedPayloads() throws {
        let parser = NotificationParser(sourceName: "apple", verifier: try World.verifier())
        for (type, subtype, uuid, transactionID) in Self.cases {
            let line = try Self.notification(type: type, subtype: subtype, uuid: uuid, transactionID: transactionID)
            let (n, sighting) = try parser.parse(JSONObject.parse(line.utf8), payloadHash: uuid, location: "n:1")
            #expect(n.notificationType == type && n.subtype == subtype)
            #expect(n.verification == .verified, "\(type): \(n.verification)")
            #expect(n.autoRenewProductID == "com.example.coins.vip", "\(type)")
            #expect(sighting?.verification == (transactionID == nil ? nil : .verified), "\(type)")
            #expect(sighting?.transaction.offerType == (transactionID == nil ? nil : 4))
            #expect(n.appTransactionID == (transactionID == nil ? nil : "704289572311899999"))
        }
    }

    @Test func aForgedNestedTransactionFailsANewTypeAsNestedFailed() throws {
        var data: [String: Any] = ["bundleId": "com.example.coins", "environment": "Production", "appAppleId": 42]
        data["signedTransactionInfo"] = try World.other.sign(payload: Self.transaction("2100000000000021"))
        let payload = World.json([
            "notificationType": "METADATA_UPDATE", "notificationUUID": "00000000-0000-4000-8000-000000000021",
            "signedDate": World.signedDate, "version": "2.0", "data": data,
        ])
        let result = try World.verifier(trusting: [World.good]).verifyNotification(World.jws(payload))
        #expect(result.outcome.reason == VerificationFailure.nestedFailed.rawValue, "\(result.outcome)")
        #expect(result.transaction?.reason == VerificationFailure.chainUntrusted.rawValue)
    }

    @Test func newAndUnknownTypesRoundTripThroughThePipelineIntoTheViews() throws {
        let world = try IngestTestWorld()
        var lines = try Self.cases.map { type, subtype, uuid, transactionID in
            try Self.notification(
                type: type, subtype: subtype, uuid: uuid, transactionID: transactionID,
                extra: type == "SOME_FUTURE_TYPE" ? ["futureBlock": ["x": 1]] : [:])
        }
        lines.append(
            try Self.notification(
                type: "RESCIND_CONSENT", subtype: nil, uuid: "00000000-0000-4000-8000-000000000008",
                transactionID: nil, appTransaction: true))
        try world.write("n.jsonl", lines.joined(separator: "\n") + "\n")
        let config = try world.config(sources: ["{name: n, kind: notifications, path: data/n.jsonl}"])
        _ = try world.run(config, verifier: try World.verifier())
        let stored = try world.rows(
            config,
            """
            SELECT notification_type, COALESCE(subtype, '-'), verification, COALESCE(transaction_id, '-'),
                   COALESCE(app_transaction_id, '-')
            FROM notifications ORDER BY notification_uuid
            """
        ).map { $0.map { $0 ?? "NULL" }.joined(separator: "|") }
        #expect(
            stored == [
                "ONE_TIME_CHARGE|-|verified|2100000000000011|704289572311899999",
                "METADATA_UPDATE|-|verified|2100000000000012|704289572311899999",
                "MIGRATION|-|verified|2100000000000013|704289572311899999",
                "PRICE_CHANGE|PENDING|verified|2100000000000014|704289572311899999",
                "SUBSCRIBED|RESUBSCRIBE|verified|2100000000000015|704289572311899999",
                "OFFER_REDEEMED|WIN_BACK_OFFER|verified|2100000000000016|704289572311899999",
                "SOME_FUTURE_TYPE|SOME_FUTURE_SUBTYPE|verified|-|-",
                "RESCIND_CONSENT|-|verified|-|\(AppTransactionIDTests.appTransactionID)",
            ])
        let transactions = try world.rows(
            config,
            """
            SELECT transaction_id, verification, offer_type, offer_identifier, advanced_commerce_info IS NOT NULL
            FROM transactions ORDER BY transaction_id
            """
        ).map { $0.map { $0 ?? "NULL" }.joined(separator: "|") }
        #expect(transactions.count == 6)
        #expect(transactions.allSatisfy { $0.hasSuffix("|verified|4|come-back-50|1") }, "\(transactions)")
        #expect(try world.rows(config, "SELECT COUNT(*) FROM quarantine") == [["0"]])
        // Fields outside Apple's schema are kept as text; documented ones are not copied.
        let unknown = try world.rows(
            config, "SELECT notification_type, unknown_fields FROM notifications WHERE unknown_fields IS NOT NULL")
        #expect(unknown == [["SOME_FUTURE_TYPE", #"{"futureBlock":{"x":1}}"#]])
    }

    @Test func theRenewalInfoIsKeptWholeWithItsOfferAndPrice() throws {
        let renewal = World.json([
            "originalTransactionId": "2100000000000001", "autoRenewProductId": "com.example.coins.vip",
            "autoRenewStatus": 1, "environment": "Production", "signedDate": World.signedDate, "offerType": 4,
            "offerIdentifier": "come-back-50", "offerDiscountType": "PAY_AS_YOU_GO", "offerPeriod": "P3M",
            "renewalPrice": 4990, "currency": "USD", "eligibleWinBackOfferIds": ["come-back-50"],
            "someFutureRenewalField": "x",
        ])
        let data: [String: Any] = [
            "bundleId": "com.example.coins", "environment": "Production", "appAppleId": 42,
            "signedTransactionInfo": try World.good.sign(payload: Self.transaction("2100000000000041")),
            "signedRenewalInfo": try World.good.sign(payload: renewal),
        ]
        let payload = World.json([
            "notificationType": "DID_RENEW", "notificationUUID": "00000000-0000-4000-8000-000000000041",
            "signedDate": World.signedDate, "version": "2.0", "data": data,
        ])
        let line = String(
            decoding: World.json(["signedPayload": try World.good.sign(payload: payload)]), as: UTF8.self)
        let world = try IngestTestWorld()
        try world.write("n.jsonl", line + "\n")
        let config = try world.config(sources: ["{name: n, kind: notifications, path: data/n.jsonl}"])
        _ = try world.run(config, verifier: try World.verifier())
        let stored = try world.rows(
            config, "SELECT verification, auto_renew_product_id, renewal_info FROM notifications")
        #expect(stored.count == 1)
        #expect(stored.first?[0] == "verified")
        #expect(stored.first?[1] == "com.example.coins.vip")
        let kept = try #require(stored.first?[2] ?? nil)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(kept.utf8)) as? [String: Any])
        #expect(object["offerIdentifier"] as? String == "come-back-50")
        #expect(object["renewalPrice"] as? Int == 4990)
        #expect(object["someFutureRenewalField"] as? String == "x")
    }

    /// A DID_FAIL_TO_RENEW (GRACE_PERIOD) notification whose renewal info gives `gracePeriodExpiresDate` as `grace`.
    static func gracePeriodNotification(uuid: String, grace: Any) throws -> String {
        let renewal = World.json([
            "originalTransactionId": "2100000000000001", "autoRenewProductId": "com.example.coins.vip",
            "autoRenewStatus": 1, "environment": "Production", "signedDate": World.signedDate,
            "isInBillingRetryPeriod": true, "gracePeriodExpiresDate": grace,
        ])
        let data: [String: Any] = [
            "bundleId": "com.example.coins", "environment": "Production", "appAppleId": 42,
            "signedTransactionInfo": try World.good.sign(payload: Self.transaction("2100000000000051")),
            "signedRenewalInfo": try World.good.sign(payload: renewal),
        ]
        let payload = World.json([
            "notificationType": "DID_FAIL_TO_RENEW", "subtype": "GRACE_PERIOD", "notificationUUID": uuid,
            "signedDate": World.signedDate, "version": "2.0", "data": data,
        ])
        return String(decoding: World.json(["signedPayload": try World.good.sign(payload: payload)]), as: UTF8.self)
    }

    /// The renewal info's `gracePeriodExpiresDate` becomes the `grace_period_expires_date` rules read; a value
    /// that is no whole number quarantines the notification, naming the field.
    @Test func theGracePeriodExpiryOfTheRenewalInfoIsAColumnAndAValueThatIsNoNumberIsQuarantined() throws {
        let grace: Int64 = 1_717_459_200_000
        let good = try Self.gracePeriodNotification(uuid: "00000000-0000-4000-8000-000000000051", grace: grace)
        let bad = try Self.gracePeriodNotification(uuid: "00000000-0000-4000-8000-000000000052", grace: "soon")
        let world = try IngestTestWorld()
        try world.write("n.jsonl", good + "\n" + bad + "\n")
        let config = try world.config(sources: ["{name: n, kind: notifications, path: data/n.jsonl}"])
        _ = try world.run(config, verifier: try World.verifier())
        let stored = try world.rows(
            config, "SELECT notification_uuid, verification, grace_period_expires_date FROM notifications")
        #expect(stored == [["00000000-0000-4000-8000-000000000051", "verified", String(grace)]])
        let reasons = try world.rows(config, "SELECT reason FROM quarantine").compactMap { $0.first ?? nil }
        #expect(reasons.count == 1)
        #expect(reasons.first?.contains("gracePeriodExpiresDate") == true, "\(reasons)")
    }

    @Test func unknownMembersOfTheNotificationAndItsDataAreKeptAsText() throws {
        var data: [String: Any] = ["bundleId": "com.example.coins", "environment": "Production", "appAppleId": 42]
        data["status"] = 1
        data["bundleVersion"] = "1.2"
        data["newDataField"] = [true, "x"]
        let payload = World.json([
            "notificationType": "FUTURE_TYPE", "notificationUUID": "00000000-0000-4000-8000-000000000031",
            "signedDate": World.signedDate, "version": "2.0", "data": data, "futureTop": 5,
        ])
        let signed = try World.good.sign(payload: payload)
        let line = String(decoding: World.json(["signedPayload": signed]), as: UTF8.self)
        let parser = NotificationParser(sourceName: "apple", verifier: try World.verifier())
        let (n, _) = try parser.parse(JSONObject.parse(line.utf8), payloadHash: "h", location: "n:1")
        #expect(n.verification == .verified)
        #expect(n.unknownFields == #"{"futureTop":5,"data.newDataField":[true,"x"]}"#)
    }
}
