import Foundation

@testable import IAPGuard
@testable import IAPGuardTesting

/// Chains and payloads shared by the verification tests. Each chain is generated once per test run.
enum VerifyTestWorld {
    /// 2024-06-01T00:00:00Z in epoch milliseconds: inside the default test leaf validity.
    static let signedDate: Int64 = 1_717_200_000_000

    static let good = makeChain(.init())
    static let goodP256 = makeChain(.init(rootCurve: .p256))
    /// Same subject names as `good`, different keys: an impostor.
    static let other = makeChain(.init())
    static let noIntermediateOID = makeChain(.init(intermediateHasMarkerOID: false))
    static let noLeafOID = makeChain(.init(leafHasMarkerOID: false))
    /// Leaf valid only during 2020.
    static let shortLivedLeaf = makeChain(
        .init(
            leafNotBefore: Date(timeIntervalSince1970: 1_577_836_800),
            leafNotAfter: Date(timeIntervalSince1970: 1_609_459_200)
        )
    )

    static func makeChain(_ options: TestSigningChain.Options) -> TestSigningChain {
        // Tests may trap: a chain that cannot be generated is a broken test setup.
        try! TestSigningChain.generate(options: options)
    }

    static let sandboxAndProduction: Set<AppleEnvironment> = [.production, .sandbox]

    /// A policy with one app `com.example.coins` (appAppleId 42).
    static func policy(environments: Set<AppleEnvironment> = [.production, .sandbox]) -> VerificationPolicy {
        VerificationPolicy(apps: [.init(bundleID: "com.example.coins", appAppleID: 42, environments: environments)])
    }

    static func verifier(
        trusting chains: [TestSigningChain] = [good, goodP256],
        environments: Set<AppleEnvironment> = [.production, .sandbox]
    ) throws -> JWSVerifier {
        try JWSVerifier(trustedRootsDER: chains.map(\.rootDER), policy: policy(environments: environments))
    }

    static func json(_ object: [String: Any]) -> Data {
        (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
    }

    static func transaction(
        bundleID: String = "com.example.coins",
        environment: String = "Production",
        signedDate: Int64? = VerifyTestWorld.signedDate
    ) -> Data {
        var object: [String: Any] = [
            "transactionId": "2000000123456789", "originalTransactionId": "2000000123456789",
            "bundleId": bundleID, "productId": "com.example.coins.pack1", "environment": environment,
            "type": "Consumable", "quantity": 1, "purchaseDate": 1_700_000_000_000,
        ]
        if let signedDate { object["signedDate"] = signedDate }
        return json(object)
    }

    static func renewal(environment: String = "Production") -> Data {
        json([
            "originalTransactionId": "2000000123456789", "autoRenewProductId": "com.example.coins.vip",
            "autoRenewStatus": 1, "environment": environment, "signedDate": signedDate,
        ])
    }

    static func notification(
        bundleID: String = "com.example.coins",
        environment: String = "Production",
        appAppleID: Int64? = 42,
        signedTransactionInfo: String? = nil,
        signedRenewalInfo: String? = nil,
        summary: Bool = false
    ) -> Data {
        var data: [String: Any] = ["bundleId": bundleID, "environment": environment]
        if let appAppleID { data["appAppleId"] = appAppleID }
        if let signedTransactionInfo { data["signedTransactionInfo"] = signedTransactionInfo }
        if let signedRenewalInfo { data["signedRenewalInfo"] = signedRenewalInfo }
        return json([
            "notificationType": summary ? "RENEWAL_EXTENSION" : "ONE_TIME_CHARGE",
            "notificationUUID": "6b2d1c9e-1111-4c1e-9a55-2f3f7d0e6a10",
            "signedDate": signedDate, "version": "2.0",
            summary ? "summary" : "data": data,
        ])
    }

    /// Signs and parses in one step.
    static func jws(_ payload: Data, by chain: TestSigningChain = good) throws -> CompactJWS {
        try CompactJWS(try chain.sign(payload: payload))
    }
}
