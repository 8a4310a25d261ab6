import Foundation
import Logging
import Testing

@testable import IAPGuard

/// Apple decodes a legacy receipt only when it answers `status` 0 (valid) or 21006 (valid, the subscription
/// expired); every other status is the status alone. A stored error answer that carries purchases, or a 21006
/// answer without any subscription expiry, was written by someone else: its sightings fail verification, so a
/// credit resting on them is IAP-020's forgery.
@Suite struct ReceiptErrorStatusTests {
    static let entry =
        #"{"quantity":"1","product_id":"com.example.coins.pack6500","transaction_id":"2000000830000001","original_transaction_id":"2000000830000001","purchase_date_ms":"1780000000000","original_purchase_date_ms":"1780000000000"}"#

    static func sightings(status: Int, inApp: String, latest: String? = nil) throws -> [AppleSighting] {
        let latestPart = latest.map { #","latest_receipt_info":[\#($0)]"# } ?? ""
        let line =
            #"{"status":\#(status),"environment":"Production","receipt":{"bundle_id":"com.example.coins","in_app":[\#(inApp)]}\#(latestPart)}"#
        let object = try JSONObject.parse(Array(line.utf8))
        return try ReceiptResponseParser(sourceName: "r").parse(object, payloadHash: "h", location: "r:1")
    }

    @Test(arguments: [21000, 21002, 21003, 21004, 21005, 21007, 21008, 21010, 21100, 21199])
    func purchasesUnderAnErrorStatusFailVerification(status: Int) throws {
        let sightings = try Self.sightings(status: status, inApp: Self.entry)
        let sighting = try #require(sightings.first)
        #expect(sightings.count == 1)
        #expect(sighting.verification.status == .failed)
        #expect(sighting.verification.reason == VerificationFailure.impossibleReceiptStatus.rawValue)
        #expect(sighting.receiptStatus == Int64(status))
        #expect(sighting.verification.detail?.contains("\(status)") == true)
    }

    @Test func purchasesOnlyInLatestReceiptInfoUnderAnErrorStatusFailToo() throws {
        let sightings = try Self.sightings(status: 21003, inApp: "", latest: Self.entry)
        #expect(sightings.map(\.verification.status) == [.failed])
    }

    static let subscription =
        #"{"quantity":"1","product_id":"com.example.coins.plus.monthly","transaction_id":"2000000830000002","original_transaction_id":"2000000830000002","purchase_date_ms":"1777000000000","expires_date_ms":"1779592000000"}"#
    /// An iOS 6-style entry: the expiry in milliseconds under `expires_date`.
    static let ios6Subscription =
        #"{"quantity":"1","product_id":"com.example.coins.plus.monthly","transaction_id":"2000000830000003","purchase_date_ms":"1777000000000","expires_date":"1779592000000"}"#

    @Test func aValidAnswerStaysApplesUnsignedCopy() throws {
        let sightings = try Self.sightings(status: 0, inApp: Self.entry)
        #expect(sightings.map(\.verification.status) == [.notSigned])
        #expect(sightings.first?.verification.reason == "status-0")
    }

    /// 21006 answers for an expired subscription; whoever believes it decodes the whole app receipt may store
    /// the app's other purchases beside it, which is still Apple's answer.
    @Test(arguments: [subscription, ios6Subscription, entry + "," + subscription])
    func anExpiredSubscriptionAnswerStaysApplesUnsignedCopy(inApp: String) throws {
        let sightings = try Self.sightings(status: 21006, inApp: inApp)
        #expect(!sightings.isEmpty)
        #expect(sightings.allSatisfy { $0.verification.status == .notSigned })
        #expect(sightings.first?.verification.reason == "status-21006")
    }

    @Test func anExpiredSubscriptionAnswerWithoutAnyExpiryFailsVerification() throws {
        let sightings = try Self.sightings(status: 21006, inApp: Self.entry)
        #expect(sightings.map(\.verification.status) == [.failed])
        #expect(sightings.first?.verification.reason == VerificationFailure.impossibleReceiptStatus.rawValue)
    }

    @Test func anErrorStatusWithAnEmptyReceiptLeavesNoSighting() throws {
        #expect(try Self.sightings(status: 21003, inApp: "").isEmpty)
    }

    /// The recall probe's rc5 s21003 case: a 21003 answer with a pack6500 in `in_app`, credited. Before, the
    /// sighting counted as Apple's unsigned copy and no rule saw the credit.
    @Test func aCreditRestingOnA21003AnswerWithPurchasesIsACreditedForgery() throws {
        let world = try IngestTestWorld()
        defer { try? FileManager.default.removeItem(at: world.directory) }
        let config = try world.receiptsAndCreditsConfig(
            product: "com.example.coins.pack6500", units: 6500, price: "49.99")
        let purchase: Int64 = 1_780_000_000_000
        try world.write(
            "receipts.jsonl",
            #"{"user_id":"u-1","order_id":"o-1","received_at":\#(purchase + 5000),"response":{"status":21003,"environment":"Production","receipt":{"bundle_id":"com.example.coins","in_app":[\#(Self.entry)]}}}"#
                + "\n")
        try world.write(
            "credits.jsonl",
            #"{"credit_id":"c-1","transaction_id":"2000000830000001","order_id":"o-1","user_id":"u-1","product_id":"com.example.coins.pack6500","units":6500,"credited_at":\#(purchase + 9000)}"#
                + "\n")
        let pipeline = Pipeline(
            config: config, verifier: UncheckedVerifier(),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        _ = try pipeline.run(Pipeline.Options(until: purchase + 86_400_000, failOn: nil))
        let findings = try world.rows(
            config,
            "SELECT rule_id, COALESCE(observed, ''), level FROM findings WHERE status <> 'resolved' AND rule_id = 'IAP-020'"
        )
        #expect(findings == [["IAP-020", "credited-forged", "critical"]], "\(findings)")
    }
}
