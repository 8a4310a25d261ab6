import Foundation
import Testing

@testable import IAPGuard

/// What Apple signed must mean one thing: duplicate keys, `crit` headers and payloads outside Apple's
/// schema are refused, and a notification without the transaction it is about never becomes a refund.
@Suite struct StrictSignedDataTests {
    static func payload(_ text: String) -> Data { Data(text.utf8) }

    static let transactionText =
        #"{"transactionId":"5001","originalTransactionId":"5001","bundleId":"com.example.coins","productId":"com.example.coins.pack6","type":"Consumable","quantity":1,"purchaseDate":1700000000000,"signedDate":1700000000000,"environment":"Production","storefront":"USA","currency":"USD","price":4990,"inAppOwnershipType":"PURCHASED"}"#

    @Test func duplicateKeysAreFoundInsideTheParseAtAnyDepthAndAfterUnescaping() throws {
        for text in [
            #"{"a":1,"a":2}"#, #"{"x":[{"k":1,"k":2}]}"#, #"{"a\u0062":1,"ab":2}"#, #"{"o":{"p":{"q":1,"q":1}}}"#,
            #"{"\u00e9":1,"é":2}"#,
        ] {
            #expect(throws: JSONParseError.self, "\(text)") {
                try JSONDocument.parse(Array(text.utf8), options: .signed)
            }
            do {
                _ = try JSONDocument.parse(Array(text.utf8), options: .signed)
            } catch {
                #expect(error.isDuplicateKey, "\(text): \(error)")
                #expect(error.message.hasPrefix("duplicate key \""), "\(text): \(error)")
            }
            // Backend records keep JSONSerialization's last-wins reading.
            #expect(throws: Never.self) { try JSONDocument.parse(Array(text.utf8), options: .foundationCompatible) }
        }
        for text in [
            #"{"a":{"b":1},"b":2}"#, #"[{"a":1},{"a":2}]"#, #"{"a":1,"A":2,"a ":3}"#, "{}",
            #"{"axb":1,"ayb":2,"a\u007ab":3}"#,
        ] {
            #expect(throws: Never.self, "\(text)") { try JSONDocument.parse(Array(text.utf8), options: .signed) }
        }
    }

    @Test func largeObjectsAreCheckedWithoutQuadraticWork() throws {
        let keys = (0..<5000).map { "\"k\($0)\":\($0)" }
        let distinct = "{" + keys.joined(separator: ",") + "}"
        #expect(throws: Never.self) { try JSONDocument.parse(Array(distinct.utf8), options: .signed) }
        let repeated = "{" + keys.joined(separator: ",") + ",\"k17\":0}"
        #expect(throws: JSONParseError.self) { try JSONDocument.parse(Array(repeated.utf8), options: .signed) }
        let escapedLate = "{" + keys.joined(separator: ",") + ",\"k\\u00341\":0}"
        #expect(throws: JSONParseError.self) { try JSONDocument.parse(Array(escapedLate.utf8), options: .signed) }
    }

    @Test func theDifferentialOracleChecksTheSignedModeOnDuplicateKeys() {
        for text in [#"{"a":1,"a":2}"#, #"{"a":[{"b":1,"b":{"c":1}}]}"#, #"{"a\u0041":1,"aA":2}"#, #"{"a":1,"b":2}"#] {
            #expect(JSONFoundationDifferential.mismatch(Array(text.utf8)) == nil, "\(text)")
        }
    }

    @Test func aWellSignedPayloadWithTwoTransactionIDsIsQuarantinedNotVerified() throws {
        let chain = MalformedCorpus.chain
        let doubled = String(Self.transactionText.dropLast()) + #","transactionId":"5002"}"#
        let line = try chain.sign(payload: Self.payload(doubled))
        let ingest = try CorpusIngest(format: "signed", bytes: Array((line + "\n").utf8))
        defer { ingest.remove() }
        // A failed copy of each id it names (a parser reading either copy credits one of them), never verified.
        let copies = try ingest.store.database.query(
            "SELECT transaction_id, verification FROM sightings ORDER BY transaction_id"
        ).map { $0.map { $0.textValue ?? "" } }
        #expect(copies == [["5001", "failed"], ["5002", "failed"]], "\(copies)")
        #expect(try ingest.count("SELECT COUNT(*) FROM transactions") == 0)
        let reasons = try ingest.quarantine().map(\.reason)
        #expect(reasons == [#"bad-format: JWS payload has a duplicate key "transactionId""#], "\(reasons)")
        // Before any verification: the compact JWS itself is refused.
        #expect(throws: CompactJWS.FormatError.self) { try CompactJWS(line) }
    }

    @Test func aCritHeaderParameterIsRefusedEvenWhenTheSignatureIsGood() throws {
        let chain = MalformedCorpus.chain
        let signed = try chain.sign(
            payload: Self.payload(Self.transactionText),
            header: ["alg": "ES256", "x5c": chain.x5cBase64, "crit": ["exp"], "exp": 1])
        do {
            _ = try CompactJWS(signed)
            Issue.record("a crit header was accepted")
        } catch let error as CompactJWS.FormatError {
            #expect(error.message.contains("crit parameter (exp)"), "\(error)")
        }
        // The same payload under Apple's header verifies.
        let plain = try chain.sign(payload: Self.payload(Self.transactionText))
        #expect(try MalformedCorpus.verifier().verify(CompactJWS(plain), as: .transaction).status == .verified)
    }

    @Test func anAppleFreeOfferWithPriceZeroIsVerifiedNotQuarantined() throws {
        let chain = MalformedCorpus.chain
        let free = Self.transactionText.replacingOccurrences(of: #""price":4990"#, with: #""price":0,"offerType":1"#)
        let ingest = try CorpusIngest(
            format: "signed", bytes: Array((try chain.sign(payload: Self.payload(free)) + "\n").utf8))
        defer { ingest.remove() }
        #expect(try ingest.quarantine().isEmpty)
        #expect(
            try ingest.count("SELECT COUNT(*) FROM transactions WHERE price = 0 AND verification = 'verified'") == 1)
    }

    static func notification(_ type: String, uuid: String, transaction: String?) throws -> String {
        let chain = MalformedCorpus.chain
        var data: [String: Any] = [
            "bundleId": "com.example.coins", "appAppleId": 1_234_567, "environment": "Production",
        ]
        if let transaction { data["signedTransactionInfo"] = transaction }
        let payload = MalformedCorpus.json([
            "notificationType": type, "notificationUUID": uuid, "signedDate": 1_700_000_100_000, "data": data,
        ])
        return MalformedCorpus.json(["signedPayload": try chain.sign(payload: Data(payload.utf8))])
    }

    @Test func aVerifiedRefundWithoutItsTransactionIsIncompleteAndNeverARefund() throws {
        let chain = MalformedCorpus.chain
        let refunded = Self.transactionText.replacingOccurrences(
            of: #""price":4990"#, with: #""price":4990,"revocationDate":1700000050000,"revocationReason":0"#)
        let lines = [
            try Self.notification("REFUND", uuid: "n-bare", transaction: nil),
            try Self.notification(
                "REFUND", uuid: "n-full", transaction: try chain.sign(payload: Self.payload(refunded))),
            try Self.notification("TEST", uuid: "n-test", transaction: nil),
        ]
        let ingest = try CorpusIngest(
            format: "notifications", bytes: Array((lines.joined(separator: "\n") + "\n").utf8))
        defer { ingest.remove() }
        let rows = try ingest.store.database.query(
            "SELECT notification_uuid, verification, verification_reason FROM notifications ORDER BY 1"
        ).map { $0.map { $0.textValue ?? "" } }
        #expect(
            rows == [["n-bare", "failed", "incomplete"], ["n-full", "verified", ""], ["n-test", "verified", ""]],
            "\(rows)")
        #expect(try ingest.count("SELECT COUNT(*) FROM refunds WHERE event_id LIKE 'notification:%'") == 1)
        #expect(try ingest.count("SELECT COUNT(*) FROM refunds WHERE event_id = 'notification:n-bare'") == 0)
    }

    /// The docs call a signed notification about a transaction that carries no transaction `incomplete`; one
    /// with no `data` at all was stored as `bad-format` and went unmentioned in the run's summary.
    @Test func aSignedTransactionNotificationWithoutDataIsIncompleteAndCounted() throws {
        let chain = MalformedCorpus.chain
        let payload = MalformedCorpus.json([
            "notificationType": "DID_RENEW", "notificationUUID": "n-nodata", "signedDate": 1_700_000_100_000,
        ])
        let line = MalformedCorpus.json(["signedPayload": try chain.sign(payload: Data(payload.utf8))])
        let ingest = try CorpusIngest(format: "notifications", bytes: Array((line + "\n").utf8))
        defer { ingest.remove() }
        let rows = try ingest.store.database.query(
            "SELECT notification_uuid, verification, verification_reason FROM notifications"
        ).map { $0.map { $0.textValue ?? "" } }
        #expect(rows == [["n-nodata", "failed", "incomplete"]], "\(rows)")

        var summary = RunSummary(runID: 1, storePath: "s")
        summary.failedNotifications = ["incomplete": 1]
        #expect(summary.text().contains("failed verification (notifications read in this run): incomplete 1"))
    }

    @Test func appleSchemaTypesAreEnforcedAndOptionalFieldsStayOptional() throws {
        func transaction(_ json: String) throws -> AppleTransaction {
            let document = try JSONDocument.parse(Array(json.utf8), options: .signed)
            return try SignedTransactionParser.transaction(from: JSONObject.object(document))
        }
        let minimal = #"{"transactionId":"1","productId":"p","purchaseDate":1}"#
        #expect(try transaction(minimal).transactionID == "1")
        let bad: [(String, String)] = [
            (
                #"{"transactionId":1,"productId":"p","purchaseDate":1}"#,
                "schema: transactionId: expected text, found a number"
            ),
            (
                #"{"transactionId":"1","productId":"p","purchaseDate":"1"}"#,
                #"schema: purchaseDate: expected a whole number, found "1""#
            ),
            (
                #"{"transactionId":"1","productId":"p","purchaseDate":1,"storefront":840}"#,
                "schema: storefront: expected text, found a number"
            ),
            (#"{"transactionId":"1","purchaseDate":1}"#, "schema: productId: missing"),
            (#"{"transactionId":"1","productId":"p"}"#, "schema: purchaseDate: missing"),
            (
                #"{"transactionId":"1","productId":"p","purchaseDate":1,"quantity":1.0}"#,
                "schema: quantity: expected a whole number, found 1"
            ),
        ]
        for (json, reason) in bad {
            do {
                _ = try transaction(json)
                Issue.record("\(json) was accepted")
            } catch let error as RecordError {
                #expect(error.message == reason, "\(json): \(error.message)")
            }
        }
    }
}
