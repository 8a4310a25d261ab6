import Foundation
import Logging
import Testing

@testable import IAPGuard

/// A legacy response's environment: `receipt.receipt_type` names where the receipt was made, so a sandbox
/// receipt stored as Production is still a Sandbox purchase (IAP-017's), and the disagreement is noted.
@Suite struct ReceiptEnvironmentTests {
    /// The sightings of a one-entry response with `environment` and `receipt_type` as given (`nil`: absent).
    static func sightings(environment: String?, receiptType: String?) throws -> [AppleSighting] {
        let env = environment.map { #""environment":"\#($0)","# } ?? ""
        let type = receiptType.map { #""receipt_type":"\#($0)","# } ?? ""
        let line =
            #"{"status":0,"# + env + #""receipt":{"# + type
            + #""bundle_id":"com.example.coins","in_app":[{"quantity":"1","product_id":"com.example.coins.pack100","transaction_id":"2000000820000006","purchase_date_ms":"1596771003000"}]},"latest_receipt_info":[{"quantity":"1","product_id":"com.example.coins.pack100","transaction_id":"2000000820000007","purchase_date_ms":"1596771003000"}]}"#
        let object = try JSONObject.parse(Array(line.utf8))
        return try ReceiptResponseParser(sourceName: "r").parse(object, payloadHash: "h", location: "r:1")
    }

    @Test(arguments: ["ProductionSandbox", "ProductionVPPSandbox", "productionsandbox"])
    func aSandboxReceiptTypeStoredAsProductionIsSandboxWithAnEnvironmentConflict(receiptType: String) throws {
        let sightings = try Self.sightings(environment: "Production", receiptType: receiptType)
        #expect(sightings.count == 2)
        for sighting in sightings {
            #expect(sighting.transaction.environment == "Sandbox")
            #expect(sighting.anomalies == ["environment-conflict"])
        }
    }

    @Test func aSandboxReceiptTypeThatAgreesOrStandsAloneIsSandboxWithoutAConflict() throws {
        for environment in ["Sandbox", nil] {
            for sighting in try Self.sightings(environment: environment, receiptType: "ProductionSandbox") {
                #expect(sighting.transaction.environment == "Sandbox", "\(String(describing: environment))")
                #expect(sighting.anomalies.isEmpty, "\(String(describing: environment))")
            }
        }
    }

    @Test func aProductionReceiptTypeUnderASandboxEnvironmentStaysSandboxWithAConflict() throws {
        for sighting in try Self.sightings(environment: "Sandbox", receiptType: "Production") {
            #expect(sighting.transaction.environment == "Sandbox")
            #expect(sighting.anomalies == ["environment-conflict"])
        }
    }

    /// Production receipts, and receipt types Apple does not name, change nothing.
    @Test func productionUnknownOrMissingReceiptTypesLeaveTheEnvironmentAsStated() throws {
        let unchanged: [(String?, String?, String?)] = [
            ("Production", "Production", "Production"), ("Production", "ProductionVPP", "Production"),
            ("Production", nil, "Production"), (nil, "Production", nil), (nil, nil, nil),
            ("Production", "Xcode", "Production"), ("Sandbox", nil, "Sandbox"),
        ]
        for (environment, receiptType, expected) in unchanged {
            for sighting in try Self.sightings(environment: environment, receiptType: receiptType) {
                #expect(sighting.transaction.environment == expected, "\(String(describing: receiptType))")
                #expect(sighting.anomalies.isEmpty, "\(String(describing: receiptType))")
            }
        }
    }

    /// The probe's S-f: the backend stored `environment` Production for a sandbox receipt and credited a
    /// non-tester. IAP-017 reports the credit; the conflict is evidence, not a forgery marker (IAP-007).
    @Test func aSandboxReceiptStoredAsProductionAndCreditedToANonTesterIsIAP017s() throws {
        let world = try IngestTestWorld()
        defer { try? FileManager.default.removeItem(at: world.directory) }
        let config = try world.receiptsAndCreditsConfig(product: "com.example.coins.pack100", units: 100, price: "0.99")
        let purchase: Int64 = 1_780_000_000_000
        try world.write(
            "receipts.jsonl",
            #"{"user_id":"u-6","order_id":"o-6","received_at":\#(purchase + 5000),"response":{"status":0,"environment":"Production","receipt":{"receipt_type":"ProductionSandbox","bundle_id":"com.example.coins","request_date_ms":"\#(purchase + 4000)","in_app":[{"quantity":"1","product_id":"com.example.coins.pack100","transaction_id":"2000000820000006","original_transaction_id":"2000000820000006","purchase_date_ms":"\#(purchase)","original_purchase_date_ms":"\#(purchase)"}]}}}"#
                + "\n")
        try world.write(
            "credits.jsonl",
            #"{"credit_id":"c-6","transaction_id":"2000000820000006","order_id":"o-6","user_id":"u-6","product_id":"com.example.coins.pack100","units":100,"credited_at":\#(purchase + 9000)}"#
                + "\n")
        let pipeline = Pipeline(
            config: config, verifier: UncheckedVerifier(),
            logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() }))
        _ = try pipeline.run(Pipeline.Options(until: purchase + 86_400_000, failOn: nil))
        #expect(
            try world.rows(config, "SELECT environment, anomalies FROM sightings")
                == [["Sandbox", "environment-conflict"]])
        let findings = try world.rows(
            config, "SELECT rule_id, COALESCE(observed, ''), level FROM findings WHERE status <> 'resolved' ORDER BY 1")
        #expect(findings == [["IAP-017", "Sandbox", "high"]], "\(findings)")
    }

    @Test func aReceiptTypeOfAnotherJSONTypeDoesNotDropTheReceipt() throws {
        let line =
            #"{"status":0,"environment":"Production","receipt":{"receipt_type":{"x":1},"bundle_id":"com.example.coins","in_app":[{"product_id":"com.example.coins.pack100","transaction_id":"2000000820000006"}]}}"#
        let sightings = try ReceiptResponseParser(sourceName: "r").parse(
            JSONObject.parse(Array(line.utf8)), payloadHash: "h", location: "r:1")
        #expect(sightings.map(\.transaction.environment) == ["Production"])
    }
}
