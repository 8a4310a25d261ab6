import Foundation
import Testing

@testable import IAPGuard

/// A signed transaction refused for its own content (a duplicate key, numbers as strings) is quarantined and
/// kept as a failed copy of the transaction id it names, so that a credit of it is a forgery (IAP-020
/// critical) and the lookup says a tampered copy came. Lines whose id cannot be read stay quarantined only.
@Suite struct RefusedSignedCopyTests {
    static let transactionText = StrictSignedDataTests.transactionText
    static let now: Int64 = 1_700_100_000_000

    /// Apple's payload with the id `id`, edited by `edit` (text in, text out).
    static func payload(_ id: String, _ edit: (String) -> String = { $0 }) -> Data {
        Data(edit(transactionText.replacingOccurrences(of: "5001", with: id)).utf8)
    }

    /// Five refused lines: a wrapped payload with two `productId`s, a bare payload with numbers as strings,
    /// a line cut inside the payload, a wrapper refused for its own metadata around a good payload, and a
    /// wrapper naming two signed payloads.
    static func lines() throws -> [String] {
        let chain = MalformedCorpus.chain
        let doubled = try chain.sign(
            payload: payload("2000000870000001") {
                String($0.dropLast()) + #","productId":"com.example.coins.pack6500"}"#
            })
        let strings = try chain.sign(
            payload: payload("2000000870000002") {
                $0.replacingOccurrences(of: #""quantity":1"#, with: #""quantity":"1""#)
                    .replacingOccurrences(of: #""price":4990"#, with: #""price":"4990""#)
            })
        let cut = String(doubled.prefix { $0 != "." }) + "." + String(doubled.split(separator: ".")[1].prefix(40))
        let good = try chain.sign(payload: payload("2000000870000004"))
        return [
            MalformedCorpus.json([
                "signedTransactionInfo": doubled, "user_id": "u-1", "order_id": "o-1", "received_at": 1_700_000_005_000,
            ]),
            strings,
            cut,
            MalformedCorpus.json(["signedTransactionInfo": good, "received_at": "yesterday"]),
            #"{"signedTransactionInfo":"\#(good)","signedTransactionInfo":"\#(strings)"}"#,
        ]
    }

    static func ingest() throws -> CorpusIngest {
        try CorpusIngest(format: "signed", bytes: Array((try lines().joined(separator: "\n") + "\n").utf8))
    }

    @Test func aRefusedRecordWhoseIDCanBeReadIsQuarantinedAndKeptAsAFailedCopy() throws {
        let ingest = try Self.ingest()
        defer { ingest.remove() }
        #expect(try ingest.quarantine().map(\.location) == (1...5).map { "input.jsonl:\($0)" })
        let rows = try ingest.store.database.query(
            """
            SELECT transaction_id, verification, verification_reason, verification_detail, source_ref,
                   submitted_by_user_id, submitted_order_id, received_at, product_id
            FROM sightings ORDER BY transaction_id
            """
        ).map { $0.map { $0.textValue ?? "" } }
        #expect(rows.map { $0[0] } == ["2000000870000001", "2000000870000002"], "\(rows)")
        #expect(rows.allSatisfy { $0[1] == "failed" && $0[2] == "bad-format" && $0[8].isEmpty }, "\(rows)")
        #expect(rows.first?[3].contains(#"duplicate key "productId""#) == true, "\(rows)")
        #expect(rows.first.map { Array($0[4...7]) } == ["input.jsonl:1", "u-1", "o-1", "1700000005000"])
        #expect(rows.last?[3].contains(#"schema: quantity: expected a whole number, found "1""#) == true)
        #expect(rows.last?[3].contains("the signature and certificate chain verify") == true, "\(rows)")
        #expect(rows.last?[4] == "input.jsonl:2")
        // Never Apple's truth.
        #expect(try ingest.count("SELECT COUNT(*) FROM transactions") == 0)
    }

    @Test func aSourceOfRefusedRecordsOnlyStillHasNoGoodRecord() throws {
        let ingest = try Self.ingest()
        defer { ingest.remove() }
        #expect(ingest.health.good == 0 && ingest.health.bad == 5)
        #expect(ingest.health.verdict(hadEarlierRecords: false).errors.first?.hasPrefix("no good record") == true)
    }

    @Test func aCreditOfARefusedCopyIsAForgeryForIAP020AndTheLookup() throws {
        let ingest = try Self.ingest()
        defer { ingest.remove() }
        var batch = IngestBatch()
        var credit = Credit(creditID: "c-1")
        credit.transactionID = "2000000870000001"
        credit.orderID = "o-1"
        credit.userID = "u-1"
        credit.productID = "com.example.coins.pack6500"
        credit.units = 6500
        credit.creditedAt = 1_700_000_009_000
        batch.credits.append((credit, "credits", "credits.jsonl:1"))
        _ = try ingest.store.write(batch, runID: 1)

        let (rules, errors) = RuleSet.load(from: RuleEngineTests.rulesFolder)
        #expect(errors.isEmpty)
        let result = try RuleEngine(store: ingest.store, referenceCurrency: "USD").evaluate(
            rules: rules, runID: 1, now: Self.now)
        let hits = result.findings.map { [$0.ruleID, $0.transactionID ?? "", $0.observed ?? "", $0.level.rawValue] }
        // No rule takes the failed copies for a purchase (IAP-014 would call them paid but never credited).
        #expect(
            hits.sorted { $0.lexicographicallyPrecedes($1) } == [
                ["IAP-020", "2000000870000001", "credited-forged", "critical"],
                ["IAP-020", "2000000870000002", "attempt-blocked", "informational"],
            ], "\(hits)")

        let lookup = try LookupService(store: ingest.store, now: Self.now).lookup(
            try LookupQuery(id: "2000000870000001"))
        let verdict = try #require(lookup.verdicts.first)
        #expect(verdict.code == .forged, "\(verdict)")
        #expect(verdict.details.contains { $0.contains("bad-format") }, "\(verdict.details)")
        #expect(!verdict.details.contains { $0.contains("No copy of the transaction was ever received") })
    }

    /// A notification whose own signature is fine but whose nested signed transaction is refused (numbers as
    /// strings, a duplicate key) is the same tampered copy as that transaction in the signed-transactions file:
    /// quarantined and kept as a failed `bad-format` sighting, so a credit of it is IAP-020's forgery. A
    /// notification refused for something else around a fine transaction (its renewal info) stays quarantined
    /// only.
    @Test func aNotificationWhoseNestedTransactionIsRefusedKeepsAFailedCopyOfIt() throws {
        let chain = MalformedCorpus.chain
        let strings = try chain.sign(
            payload: Self.payload("2000000870000011") {
                $0.replacingOccurrences(of: #""price":4990"#, with: #""price":"4990""#)
            })
        let doubled = try chain.sign(
            payload: Self.payload("2000000870000012") {
                String($0.dropLast()) + #","productId":"com.example.coins.pack6500"}"#
            })
        let fine = try chain.sign(payload: Self.payload("2000000870000013"))
        let badRenewal = MalformedCorpus.json([
            "signedPayload": try chain.sign(
                payload: Data(
                    MalformedCorpus.json([
                        "notificationType": "DID_RENEW", "notificationUUID": "n-3", "signedDate": 1_700_000_100_000,
                        "data": [
                            "bundleId": "com.example.coins", "appAppleId": 1_234_567, "environment": "Production",
                            "signedTransactionInfo": fine, "signedRenewalInfo": "not-a-jws",
                        ],
                    ]).utf8))
        ])
        let lines = [
            try StrictSignedDataTests.notification("ONE_TIME_CHARGE", uuid: "n-1", transaction: strings),
            try StrictSignedDataTests.notification("ONE_TIME_CHARGE", uuid: "n-2", transaction: doubled),
            badRenewal,
        ]
        let ingest = try CorpusIngest(
            format: "notifications", bytes: Array((lines.joined(separator: "\n") + "\n").utf8))
        defer { ingest.remove() }
        #expect(try ingest.quarantine().map(\.location) == (1...3).map { "input.jsonl:\($0)" })
        let rows = try ingest.store.database.query(
            """
            SELECT transaction_id, source_kind, verification, verification_reason, verification_detail, source_ref
            FROM sightings ORDER BY transaction_id
            """
        ).map { $0.map { $0.textValue ?? "" } }
        #expect(rows.map { $0[0] } == ["2000000870000011", "2000000870000012"], "\(rows)")
        #expect(rows.allSatisfy { $0[1] == "notification" && $0[2] == "failed" && $0[3] == "bad-format" }, "\(rows)")
        #expect(rows.first?[4].contains("data.signedTransactionInfo: schema: price") == true, "\(rows)")
        #expect(rows.last?[4].contains(#"duplicate key "productId""#) == true, "\(rows)")
        #expect(rows.map { $0[5] } == ["input.jsonl:1", "input.jsonl:2"])
        #expect(try ingest.count("SELECT COUNT(*) FROM transactions") == 0)
        #expect(try ingest.count("SELECT COUNT(*) FROM notifications") == 0)
    }

    @Test func copiesAreReadOnlyFromAWholePayload() {
        let header = Base64URL.encode(Data(#"{"alg":"ES256"}"#.utf8))
        func jws(_ payload: String, signature: String = "c2ln") -> String {
            header + "." + Base64URL.encode(Data(payload.utf8)) + "." + signature
        }
        let ids = SignedTransactionParser.transactionIDs
        #expect(ids(jws(#"{"transactionId":"1","transactionId":"2","transactionId":"1"}"#)) == ["1", "2"])
        #expect(ids(jws(#"{"transactionId":2000000860000004}"#)) == ["2000000860000004"])
        #expect(ids(jws(#"{"transactionId":1.5,"productId":"p"}"#)).isEmpty)
        #expect(ids(jws(#"{"transactionId":""}"#)).isEmpty)
        #expect(ids(jws(#"{"x":{"transactionId":"9"}}"#)).isEmpty)
        #expect(ids(jws(#"{"transactionId":"1","productId":"#)).isEmpty)
        #expect(ids(jws(#"{"transactionId":"1"}"#, signature: "")).isEmpty)
        #expect(
            ids(String(jws(#"{"transactionId":"1"}"#).split(separator: ".").prefix(2).joined(separator: "."))).isEmpty)
    }
}
