import Foundation
import Testing

@testable import IAPGuard
@testable import IAPGuardTesting

/// Apple's `appTransactionId` from signed transactions and from a notification's
/// `appData.signedAppTransactionInfo`, verified with the test chain, stored in the views on every write path,
/// and kept when a later copy lacks it.
@Suite struct AppTransactionIDTests {
    typealias World = VerifyTestWorld
    static let appTransactionID = "704289572311812345"

    static func appTransaction(receiptType: String = "Production", bundleID: String = "com.example.coins") -> Data {
        World.json([
            "appTransactionId": appTransactionID, "bundleId": bundleID, "receiptType": receiptType,
            "originalPurchaseDate": 1_700_000_000_000, "originalPlatform": "iOS", "appAppleId": 42,
            "signedDate": World.signedDate, "originalApplicationVersion": "1.0", "applicationVersion": "2.3",
        ])
    }

    /// A RESCIND_CONSENT notification: `appData` instead of `data`.
    static func rescindConsent(
        signedAppTransactionInfo: String?, environment: String = "Production", type: String = "RESCIND_CONSENT",
        extra: [String: Any] = [:]
    ) -> Data {
        var appData: [String: Any] = ["appAppleId": 42, "bundleId": "com.example.coins", "environment": environment]
        if let signedAppTransactionInfo { appData["signedAppTransactionInfo"] = signedAppTransactionInfo }
        var object: [String: Any] = [
            "notificationType": type, "notificationUUID": "0f0e0d0c-1111-4c1e-9a55-2f3f7d0e6a10",
            "signedDate": World.signedDate, "version": "2.0", "appData": appData,
        ]
        for (key, value) in extra { object[key] = value }
        return World.json(object)
    }

    static func parse(_ payload: Data, by chain: TestSigningChain = World.good) throws -> (
        AppleNotification, AppleSighting?
    ) {
        let signed = try chain.sign(payload: payload)
        let line = String(decoding: World.json(["signedPayload": signed]), as: UTF8.self)
        let parser = NotificationParser(sourceName: "apple", verifier: try World.verifier(trusting: [World.good]))
        return try parser.parse(JSONObject.parse(line.utf8), payloadHash: "h", location: "n.jsonl:1")
    }

    @Test func aSignedTransactionCarriesItsAppTransactionID() throws {
        var object = try JSONSerialization.jsonObject(with: World.transaction()) as? [String: Any] ?? [:]
        object["appTransactionId"] = Self.appTransactionID
        let text = String(decoding: World.json(object), as: UTF8.self)
        let t = try SignedTransactionParser.transaction(from: JSONObject.parse(text.utf8))
        #expect(t.appTransactionID == Self.appTransactionID)
        let without = try SignedTransactionParser.transaction(
            from: JSONObject.parse(String(decoding: World.transaction(), as: UTF8.self).utf8))
        #expect(without.appTransactionID == nil)
    }

    @Test func aGenuineAppDataNotificationVerifiesWithItsAppTransaction() throws {
        let app = try World.good.sign(payload: Self.appTransaction())
        let result = try World.verifier().verifyNotification(
            World.jws(Self.rescindConsent(signedAppTransactionInfo: app)))
        #expect(result.outcome == .verified, "\(result.outcome)")
        #expect(result.appTransaction == .verified)
        #expect(result.transaction == nil)
    }

    @Test func aForgedAppTransactionFailsTheNotificationAsNestedFailed() throws {
        let forged = try World.other.sign(payload: Self.appTransaction())
        let result = try World.verifier(trusting: [World.good]).verifyNotification(
            World.jws(Self.rescindConsent(signedAppTransactionInfo: forged)))
        #expect(result.outcome.reason == VerificationFailure.nestedFailed.rawValue, "\(result.outcome)")
        #expect(result.outcome.detail?.contains("signedAppTransactionInfo") == true)
        #expect(result.appTransaction?.reason == VerificationFailure.chainUntrusted.rawValue)
    }

    @Test(arguments: ["Xcode", "LocalTesting"])
    func aLocallySignedAppTransactionNeverVerifies(receiptType: String) throws {
        let app = try World.good.sign(payload: Self.appTransaction(receiptType: receiptType))
        let outcome = try World.verifier().verify(
            World.jws(Self.appTransaction(receiptType: receiptType)), as: .appTransaction)
        #expect(outcome.reason == VerificationFailure.wrongEnvironment.rawValue)
        let result = try World.verifier().verifyNotification(
            World.jws(Self.rescindConsent(signedAppTransactionInfo: app)))
        #expect(result.outcome.reason == VerificationFailure.nestedFailed.rawValue)
    }

    @Test func anAppTransactionOfAnotherAppIsWrongBundle() throws {
        let outcome = try World.verifier().verify(
            World.jws(Self.appTransaction(bundleID: "com.other")), as: .appTransaction)
        #expect(outcome.reason == VerificationFailure.wrongBundle.rawValue)
    }

    @Test func theKindOfAnAppTransactionIsInferred() throws {
        #expect(SignedPayloadKind(inferringFrom: try World.jws(Self.appTransaction())) == .appTransaction)
        #expect(SignedPayloadKind(inferringFrom: try World.jws(World.transaction())) == .transaction)
    }

    @Test func anAppDataNotificationIsParsedWithItsAppTransactionID() throws {
        let app = try World.good.sign(payload: Self.appTransaction())
        let (n, sighting) = try Self.parse(Self.rescindConsent(signedAppTransactionInfo: app))
        #expect(sighting == nil)
        #expect(n.notificationType == "RESCIND_CONSENT")
        #expect(n.bundleID == "com.example.coins" && n.environment == "Production" && n.appAppleID == 42)
        #expect(n.appTransactionID == Self.appTransactionID)
        #expect(n.verification == .verified, "\(n.verification)")
    }

    @Test func anUnknownTypeWithUnknownFieldsStaysNonFatal() throws {
        let (n, sighting) = try Self.parse(
            Self.rescindConsent(
                signedAppTransactionInfo: nil, type: "SOME_FUTURE_TYPE",
                extra: ["futureField": ["nested": [1, 2, 3]], "subtype": "FUTURE_SUBTYPE"]))
        #expect(sighting == nil)
        #expect(n.notificationType == "SOME_FUTURE_TYPE" && n.subtype == "FUTURE_SUBTYPE")
        #expect(n.appTransactionID == nil)
        #expect(n.verification == .verified, "\(n.verification)")
    }

    @Test func aBrokenSignedAppTransactionIsAClearRecordError() throws {
        #expect(throws: RecordError.self) {
            try Self.parse(Self.rescindConsent(signedAppTransactionInfo: "not a jws"))
        }
    }

    // MARK: The store

    static func sighting(_ label: String, appTransactionID: String?, signed: Int64) -> AppleSighting {
        var t = AppleTransaction(transactionID: "7100000000000001")
        t.originalTransactionID = t.transactionID
        t.bundleID = "com.example.coins"
        t.productID = "com.example.coins.pack100"
        t.environment = "Production"
        t.purchaseDate = 1_780_000_000_000
        t.signedDate = 1_780_000_000_000 + signed
        t.appTransactionID = appTransactionID
        return AppleSighting(
            transaction: t, sourceKind: .jws, sourceName: "apple", sourceRef: "copy \(label)",
            payloadHash: "hash-\(label)", verification: VerificationOutcome(status: .verified))
    }

    static var batches: [IngestBatch] {
        var first = IngestBatch()
        first.sightings = [sighting("first", appTransactionID: appTransactionID, signed: 1000)]
        var n = AppleNotification(notificationUUID: "uuid-rescind")
        n.notificationType = "RESCIND_CONSENT"
        n.bundleID = "com.example.coins"
        n.environment = "Production"
        n.appTransactionID = appTransactionID
        n.verification = VerificationOutcome(status: .verified)
        n.sourceName = "apple"
        n.sourceRef = "n:1"
        n.payloadHash = "n-1"
        first.notifications = [n]
        // A later, better (newer) copy without the id must not erase it.
        var later = IngestBatch()
        later.sightings = [sighting("later", appTransactionID: nil, signed: 5000)]
        return [first, later]
    }

    static func stored(_ store: any SQLBackedStore) throws -> [String] {
        let t = try store.rows("SELECT app_transaction_id, signed_date FROM transactions", [:])
        let s = try store.rows("SELECT app_transaction_id FROM sightings ORDER BY source_ref", [:])
        let n = try store.rows("SELECT app_transaction_id FROM notifications", [:])
        return (t + s + n).map {
            $0.map { $0.textValue ?? $0.integerValue.map(String.init) ?? "NULL" }.joined(separator: "|")
        }
    }

    static let expected = [
        "\(appTransactionID)|1780000005000", appTransactionID, "NULL", appTransactionID,
    ]

    @Test(arguments: [false, true])
    func theIDIsStoredInTheViewsAndSurvivesALaterCopyWithoutIt(rowByRow: Bool) throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        try RefundReversalTests.write(Self.batches, to: store, rowByRow: rowByRow)
        #expect(try Self.stored(store) == Self.expected)
    }

    @Test func anAppTransactionIDLooksUpThatAppleAccountsTransactionsAcrossAccounts() throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        var batch = IngestBatch()
        for (index, user) in ["u-owner", "u-farm-1", "u-farm-2"].enumerated() {
            var s = Self.sighting("farm \(index)", appTransactionID: Self.appTransactionID, signed: 1000)
            s.transaction.transactionID = "720000000000000\(index)"
            s.transaction.originalTransactionID = s.transaction.transactionID
            s.transaction.purchaseDate = 1_780_000_000_000 + Int64(index) * 60_000
            batch.sightings.append(s)
            var c = Credit(creditID: "c-\(index)")
            c.transactionID = s.transaction.transactionID
            c.userID = user
            c.creditedAt = s.transaction.purchaseDate
            batch.credits.append((c, "credits", "credits.csv:\(index + 2)"))
        }
        var other = Self.sighting("other account", appTransactionID: "704289572399999999", signed: 1000)
        other.transaction.transactionID = "7200000000000009"
        other.transaction.originalTransactionID = "7200000000000009"
        batch.sightings.append(other)
        try RefundReversalTests.write([batch], to: store)
        let service = LookupService(store: store, now: 1_780_100_000_000)
        let result = try service.lookup(try LookupQuery(id: Self.appTransactionID, kind: .appTransaction))
        #expect(result.query.matches.map(\.kind) == [.appTransaction])
        #expect(
            result.evidence.transactions.map(\.transactionID) == [
                "7200000000000000", "7200000000000001", "7200000000000002",
            ])
        #expect(result.evidence.transactions.allSatisfy { $0.appTransactionID == Self.appTransactionID })
        #expect(Set(result.evidence.credits.compactMap(\.userID)) == ["u-owner", "u-farm-1", "u-farm-2"])
        // Without --kind the id is found as an app transaction id too.
        let guessed = try service.lookup(try LookupQuery(id: Self.appTransactionID))
        #expect(guessed.query.matches.map(\.kind) == [.appTransaction])
    }

    @Test func aFamilyRevokeIsARevokeEventNeverARefund() throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        var purchased = Self.sighting("family", appTransactionID: Self.appTransactionID, signed: 1000)
        purchased.transaction.revocationDate = 1_780_000_100_000
        purchased.transaction.revocationReason = 0
        purchased.transaction.revocationType = "FAMILY_REVOKE"
        var refunded = Self.sighting("refund", appTransactionID: nil, signed: 1000)
        refunded.transaction.transactionID = "7100000000000002"
        refunded.transaction.revocationDate = 1_780_000_100_000
        refunded.transaction.revocationReason = 0
        refunded.transaction.revocationType = "REFUND_FULL"
        var batch = IngestBatch()
        batch.sightings = [purchased, refunded]
        try RefundReversalTests.write([batch], to: store)
        let events = try store.rows("SELECT transaction_id, event_type FROM refunds ORDER BY transaction_id", [:])
            .map { $0.map { $0.textValue ?? "" } }
        #expect(events == [["7100000000000001", "REVOKE"], ["7100000000000002", "REFUND"]])
    }
}

@Suite(.enabled(if: TestPostgres.available, "no PostgreSQL server for the tests (see PostgresAvailabilityTests)"))
struct PostgresAppTransactionIDTests {
    @Test func theIDIsStoredAsOnSQLiteByCopyAndRowByRow() throws {
        let copying = try TestPostgres.freshStore("apptx_c")
        let rowByRow = try TestPostgres.freshStore("apptx_r")
        rowByRow.usesCopy = false
        for store in [copying, rowByRow] {
            try RefundReversalTests.write(AppTransactionIDTests.batches, to: store)
            #expect(try AppTransactionIDTests.stored(store) == AppTransactionIDTests.expected)
        }
    }
}
