import Foundation
import Testing

@testable import IAPGuard
@testable import IAPGuardTesting

/// A signed payload whose `environment` names a known environment in another case (`sandbox`, `SANDBOX`)
/// verifies as that environment, so ingest stores it in Apple's spelling: the rules compare the exact words
/// (IAP-017 `environment IN ('Sandbox', …)`, IAP-014 `environment = 'Production'`), and a Sandbox purchase
/// spelled `sandbox` and credited to a customer was judged by none of them.
@Suite struct EnvironmentSpellingTests {
    typealias World = VerifyTestWorld

    static func transaction(environment: String) throws -> AppleTransaction {
        let text =
            #"{"transactionId":"2000000000000007","productId":"com.example.coins.pack100","#
            + #""purchaseDate":1788220800000,"environment":""# + environment + #""}"#
        return try SignedTransactionParser.transaction(from: JSONObject.parse(Array(text.utf8)))
    }

    @Test func aSignedTransactionsEnvironmentIsStoredInApplesSpelling() throws {
        #expect(try Self.transaction(environment: "sandbox").environment == "Sandbox")
        #expect(try Self.transaction(environment: "SANDBOX").environment == "Sandbox")
        #expect(try Self.transaction(environment: "production").environment == "Production")
        #expect(try Self.transaction(environment: "Sandbox").environment == "Sandbox")
        // Text that names no environment stays as it came (the verifier refuses it as wrong-environment).
        #expect(try Self.transaction(environment: "Sandbox ").environment == "Sandbox ")
        #expect(try Self.transaction(environment: "Staging").environment == "Staging")
    }

    @Test func aNotificationsEnvironmentIsStoredInApplesSpelling() throws {
        let data: [String: Any] = ["bundleId": "com.example.coins", "environment": "sandbox", "appAppleId": 42]
        let payload = World.json([
            "notificationType": "TEST", "notificationUUID": "00000000-0000-4000-8000-000000000031",
            "signedDate": World.signedDate, "version": "2.0", "data": data,
        ])
        let line = World.json(["signedPayload": try World.good.sign(payload: payload)])
        let parser = NotificationParser(sourceName: "apple", verifier: try World.verifier())
        let (notification, _) = try parser.parse(JSONObject.parse(Array(line)), payloadHash: "h", location: "n:1")
        #expect(notification.environment == "Sandbox")
    }
}
