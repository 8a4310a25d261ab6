import Foundation
import Testing

@testable import IAPGuard
@testable import IAPGuardTesting

/// The terms a purchase was made on — offer, billing plan and commitment, Advanced Commerce items — and the
/// signed fields Apple adds later: read from Apple's sample and from test-chain-signed payloads, held to
/// Apple's types, stored in the views on every write path, and shown by the lookup.
@Suite struct PurchaseTermsTests {
    typealias World = VerifyTestWorld

    /// A transaction bought with an offer code's free month, with one field Apple has not documented.
    static func offerTransaction(_ changes: [String: Any] = [:]) -> Data {
        var object = (try? JSONSerialization.jsonObject(with: World.transaction()) as? [String: Any]) ?? [:]
        object["type"] = "Auto-Renewable Subscription"
        object["offerType"] = 3
        object["offerIdentifier"] = "SPRING-CODE"
        object["offerDiscountType"] = "FREE_TRIAL"
        object["offerPeriod"] = "P1M"
        object["price"] = 0
        object["currency"] = "USD"
        object["futureSignal"] = ["score": 7, "labels": ["a", "b"]]
        for (key, value) in changes { object[key] = value }
        return World.json(object)
    }

    static func parse(_ payload: Data) throws -> AppleTransaction {
        try SignedTransactionParser.transaction(from: JSONObject.parse(Array(payload)))
    }

    @Test func applesSampleKeepsTheOfferBillingPlanCommitmentAndAdvancedCommerceItems() throws {
        let data = try Data(contentsOf: Fixtures.local("apple/models/signedTransaction.json"))
        let t = try Self.parse(data)
        #expect(t.offerType == 1)
        #expect(t.offerIdentifier == "abc.123")
        #expect(t.offerDiscountType == "PAY_AS_YOU_GO")
        #expect(t.offerPeriod == "P1Y")
        #expect(t.billingPlanType == "MONTHLY")
        #expect(
            t.commitmentInfo
                == #"{"billingPeriodNumber":3,"commitmentExpiresDate":1698150000000,"commitmentPrice":119880,"totalBillingPeriods":12}"#
        )
        let commerce = try JSONObject.parse(Array((t.advancedCommerceInfo ?? "").utf8))
        let refund = try commerce.objects("items").first?.objects("refunds").first
        #expect(try refund?.int64("refundAmount") == 5000)
        #expect(try refund?.string("refundType") == "PRORATED")
        #expect(try commerce.string("taxRate") == "0.15")
        // Every member of the sample is documented: nothing is left over as unknown.
        #expect(t.unknownFields == nil)
    }

    @Test func aSignedOfferCodePurchaseVerifiesAndKeepsAnUnknownFieldAsText() throws {
        let payload = Self.offerTransaction()
        let outcome = try World.verifier().verify(World.jws(payload), as: .transaction)
        #expect(outcome == .verified, "\(outcome)")
        let t = try Self.parse(payload)
        #expect(t.offerType == 3 && t.offerIdentifier == "SPRING-CODE")
        #expect(t.offerDiscountType == "FREE_TRIAL" && t.offerPeriod == "P1M")
        #expect(t.price == 0)
        #expect(t.unknownFields == #"{"futureSignal":{"labels":["a","b"],"score":7}}"#)
    }

    @Test(
        arguments: [
            (4, "PAY_UP_FRONT", "P3M"), (2, "PAY_AS_YOU_GO", "P1W"), (1, "ONE_TIME", nil), (7, "SOME_NEW_MODE", "P2D"),
        ] as [(Int, String, String?)])
    func everyOfferTypeAndPaymentModeIsKeptAsItCame(type: Int, mode: String, period: String?) throws {
        var changes: [String: Any] = ["offerType": type, "offerDiscountType": mode]
        changes["offerPeriod"] = period ?? NSNull()
        let t = try Self.parse(Self.offerTransaction(changes))
        #expect(t.offerType == Int64(type) && t.offerDiscountType == mode && t.offerPeriod == period)
    }

    @Test func escapedKeysAreToldApartAfterUnescaping() throws {
        let text = #"{"transactionId":"1","productId":"p","purchaseDate":1,"offer\u0054ype":2,"fu\u0074ure":"x"}"#
        let t = try SignedTransactionParser.transaction(from: JSONObject.parse(Array(text.utf8)))
        #expect(t.offerType == 2)
        #expect(t.unknownFields == #"{"future":"x"}"#)
    }

    @Test func anUnknownKeyGivenTwiceIsStillRefusedBeforeVerification() throws {
        let text = String(decoding: Self.offerTransaction(), as: UTF8.self)
        let doubled = String(text.dropLast()) + #","futureSignal":{"score":1}}"#
        let signed = try World.good.sign(payload: Data(doubled.utf8))
        #expect(throws: CompactJWS.FormatError.self) { try CompactJWS(signed) }
    }

    /// Each case: the member, its value as JSON text, and the field the error must name.
    @Test(arguments: [
        ("offerType", #""3""#, "offerType"),
        ("offerPeriod", "1", "offerPeriod"),
        ("billingPlanType", #"["MONTHLY"]"#, "billingPlanType"),
        ("commitmentInfo", #"{"commitmentPrice": "119.88"}"#, "commitmentInfo.commitmentPrice"),
        ("commitmentInfo", #""monthly""#, "commitmentInfo"),
        (
            "advancedCommerceInfo", #"{"items": [{"SKU": "s", "refunds": [{"refundAmount": "5"}]}]}"#,
            "advancedCommerceInfo.items[0].refunds[0].refundAmount"
        ),
        ("advancedCommerceInfo", #"{"items": "one"}"#, "advancedCommerceInfo.items"),
    ])
    func aKnownFieldOfTheWrongTypeIsASchemaErrorNamingIt(key: String, valueJSON: String, named: String) throws {
        let value = try JSONSerialization.jsonObject(with: Data(valueJSON.utf8), options: .fragmentsAllowed)
        let error = #expect(throws: RecordError.self) {
            try Self.parse(Self.offerTransaction([key: value]))
        }
        #expect(error?.message.hasPrefix("schema: \(named)") == true, "\(error?.message ?? "")")
    }

    // MARK: The store

    static func sighting(_ payload: Data, label: String) throws -> AppleSighting {
        let t = try parse(payload)
        return AppleSighting(
            transaction: t, sourceKind: .jws, sourceName: "apple", sourceRef: "copy \(label)",
            payloadHash: "hash-\(label)", verification: VerificationOutcome(status: .verified))
    }

    static var batches: [IngestBatch] {
        get throws {
            let sample = try Data(contentsOf: Fixtures.local("apple/models/signedTransaction.json"))
            var first = IngestBatch()
            var apple = try sighting(sample, label: "sample")
            apple.transaction.environment = "Production"
            first.sightings = [try sighting(offerTransaction(), label: "offer"), apple]
            // A later, better copy without the terms must not erase them.
            var later = IngestBatch()
            var bare = try sighting(World.transaction(signedDate: World.signedDate + 1000), label: "later")
            bare.transaction.signedDate = World.signedDate + 1000
            later.sightings = [bare]
            return [first, later]
        }
    }

    static let columns =
        "transaction_id, offer_type, offer_identifier, offer_discount_type, offer_period, billing_plan_type, "
        + "commitment_info IS NOT NULL, advanced_commerce_info IS NOT NULL, unknown_fields"

    static func stored(_ store: any SQLBackedStore) throws -> [String] {
        let t = try store.rows("SELECT \(columns) FROM transactions ORDER BY transaction_id", [:])
        let s = try store.rows("SELECT \(columns) FROM sightings ORDER BY source_ref", [:])
        return (t + s).map {
            $0.map { $0.textValue ?? $0.integerValue.map(String.init) ?? "NULL" }.joined(separator: "|")
        }
    }

    static let unknown = #"{"futureSignal":{"labels":["a","b"],"score":7}}"#
    static let expected = [
        "2000000123456789|3|SPRING-CODE|FREE_TRIAL|P1M|NULL|0|0|\(unknown)",
        "23456|1|abc.123|PAY_AS_YOU_GO|P1Y|MONTHLY|1|1|NULL",
        "2000000123456789|NULL|NULL|NULL|NULL|NULL|0|0|NULL",
        "2000000123456789|3|SPRING-CODE|FREE_TRIAL|P1M|NULL|0|0|\(unknown)",
        "23456|1|abc.123|PAY_AS_YOU_GO|P1Y|MONTHLY|1|1|NULL",
    ]

    @Test(arguments: [false, true])
    func theTermsAreStoredInTheViewsAndSurviveALaterCopyWithoutThem(rowByRow: Bool) throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        try RefundReversalTests.write(try Self.batches, to: store, rowByRow: rowByRow)
        #expect(try Self.stored(store) == Self.expected)
    }

    // MARK: Findings

    @Test func aDisplayedPriceMismatchFromAnOfferNamesTheOfferInItsEvidence() throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        var batch = IngestBatch()
        var offer = try Self.sighting(Self.offerTransaction(["price": 2490]), label: "offer")
        offer.transaction.productID = "com.example.coins.pack1"
        batch.sightings = [offer]
        var order = BackendOrder(orderID: "o-1")
        order.userID = "u-1"
        order.transactionID = offer.transaction.transactionID
        // Shown less than the offer charged (an offer charged less than shown is not a mismatch).
        order.price = 990
        order.currency = "USD"
        batch.orders = [(order, "orders", "orders.csv:2")]
        try RefundReversalTests.write([batch], to: store)
        let (rules, _) = RuleSet.load(from: Fixtures.repoRoot.appendingPathComponent("rules"))
        let rule = try #require(rules.first { $0.id == "IAP-010" })
        let result = try RuleEngine(store: store, referenceCurrency: "USD").evaluate(
            rules: [rule], runID: 2, now: 1_800_000_000_000)
        let finding = try #require(result.findings.first)
        let terms = try #require(finding.evidence.first { $0.kind == "purchase-terms" })
        let fields = Dictionary(uniqueKeysWithValues: terms.fields.map { ($0.name, $0.value) })
        #expect(fields["offer_type"] == "3" && fields["offer_identifier"] == "SPRING-CODE")
        #expect(fields["offer_discount_type"] == "FREE_TRIAL" && fields["offer_period"] == "P1M")
    }

    // MARK: The lookup

    @Test func theLookupShowsTheAppleAccountOfferAndCommerceItemsInTextAndJSON() throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        let sample = try Data(contentsOf: Fixtures.local("apple/models/signedTransaction.json"))
        var apple = try Self.sighting(sample, label: "sample")
        apple.transaction.environment = "Production"
        var batch = IngestBatch()
        batch.sightings = [
            try Self.sighting(Self.offerTransaction(["appTransactionId": "704289572311812345"]), label: "o"), apple,
        ]
        try RefundReversalTests.write([batch], to: store)
        let service = LookupService(store: store, now: 1_800_000_000_000)

        let offer = try service.lookup(try LookupQuery(id: "2000000123456789", kind: .transaction))
        let text = LookupTextRenderer().render(offer)
        let flat = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        #expect(flat.contains("Apple Account 704289572311812345"), "\(text)")
        #expect(flat.contains(#"offer code "SPRING-CODE" (FREE_TRIAL, P1M)"#), "\(text)")
        #expect(flat.contains("unmodelled signed fields: futureSignal"), "\(text)")
        let json = try LookupJSON.encode(offer)
        #expect(
            json.contains("\"offer_identifier\" : \"SPRING-CODE\"")
                || json.contains("\"offer_identifier\":\"SPRING-CODE\""), "\(json)")
        #expect(json.contains("704289572311812345"))

        let sampled = try service.lookup(try LookupQuery(id: "23456", kind: .transaction))
        let sampleText = LookupTextRenderer().render(sampled).split(separator: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        #expect(sampleText.contains("Apple Account 71134"), "\(sampleText)")
        #expect(sampleText.contains("billing MONTHLY (commitment period 3 of 12"), "\(sampleText)")
        #expect(sampleText.contains("Advanced Commerce: 1 item, 1 refund of 5.00 USD, 1 revoked"), "\(sampleText)")
    }
}

@Suite(.enabled(if: TestPostgres.available, "no PostgreSQL server for the tests (see PostgresAvailabilityTests)"))
struct PostgresPurchaseTermsTests {
    @Test func theTermsAreStoredAsOnSQLiteByCopyAndRowByRow() throws {
        let copying = try TestPostgres.freshStore("terms_c")
        let rowByRow = try TestPostgres.freshStore("terms_r")
        rowByRow.usesCopy = false
        for store in [copying, rowByRow] {
            try RefundReversalTests.write(try PurchaseTermsTests.batches, to: store)
            #expect(try PurchaseTermsTests.stored(store) == PurchaseTermsTests.expected)
            var n = AppleNotification(notificationUUID: "00000000-0000-4000-8000-000000000041")
            n.notificationType = "FUTURE_TYPE"
            n.unknownFields = #"{"futureTop":5}"#
            n.sourceName = "apple"
            n.sourceRef = "n:1"
            n.payloadHash = "n-41"
            var batch = IngestBatch()
            batch.notifications = [n]
            try RefundReversalTests.write([batch], to: store)
            #expect(
                try store.rows("SELECT notification_type, unknown_fields FROM notifications", [:]).map {
                    $0.map { $0.textValue ?? "NULL" }
                } == [["FUTURE_TYPE", #"{"futureTop":5}"#]])
        }
    }
}
