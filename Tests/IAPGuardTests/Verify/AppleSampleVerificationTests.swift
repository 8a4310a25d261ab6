import Foundation
import Testing

@testable import IAPGuard

/// Apple's own signed samples (chains to the TEST root `testCA.der`, Sandbox, bundle `com.example`).
@Suite struct AppleSampleVerificationTests {
    static func sample(_ name: String) throws -> CompactJWS {
        try CompactJWS(try String(contentsOf: Fixtures.local("apple/signed/\(name)"), encoding: .utf8))
    }

    static func testCAVerifier(environments: Set<AppleEnvironment> = [.sandbox]) throws -> JWSVerifier {
        let testCA = try Data(contentsOf: Fixtures.local("apple/certs/testCA.der"))
        let policy = VerificationPolicy(apps: [
            .init(bundleID: "com.example", appAppleID: 1234, environments: environments)
        ])
        return try JWSVerifier(trustedRootsDER: [testCA], policy: policy)
    }

    static func appleRootVerifier() throws -> JWSVerifier {
        let policy = VerificationPolicy(apps: [
            .init(bundleID: "com.example", appAppleID: 1234, environments: [.sandbox])
        ])
        return try JWSVerifier(trustedRootsDER: [AppleRootCertificates.appleRootCAG3DER], policy: policy)
    }

    @Test func appleSampleTransactionVerifiesAgainstTestCA() throws {
        let outcome = try Self.testCAVerifier().verify(Self.sample("transactionInfo"), as: .transaction)
        #expect(outcome == .verified, "\(outcome)")
    }

    @Test func appleSampleRenewalInfoVerifiesAgainstTestCA() throws {
        let outcome = try Self.testCAVerifier().verify(Self.sample("renewalInfo"), as: .renewalInfo)
        #expect(outcome == .verified, "\(outcome)")
    }

    @Test func appleSampleTestNotificationVerifiesAgainstTestCA() throws {
        let result = try Self.testCAVerifier().verifyNotification(Self.sample("testNotification"))
        #expect(result.outcome == .verified, "\(result.outcome)")
        #expect(result.transaction == nil)
        #expect(result.renewal == nil)
    }

    @Test(arguments: [
        ("transactionInfo", SignedPayloadKind.transaction),
        ("renewalInfo", .renewalInfo),
        ("testNotification", .notification),
    ])
    func appleSamplesAreUntrustedUnderAppleRootG3(name: String, kind: SignedPayloadKind) throws {
        let outcome = try Self.appleRootVerifier().verify(Self.sample(name), as: kind)
        #expect(outcome.status == .failed)
        #expect(outcome.reason == VerificationFailure.chainUntrusted.rawValue, "\(outcome)")
        #expect(outcome.detail?.isEmpty == false)
    }

    @Test func appleSampleSandboxTransactionFailsWhenOnlyProductionIsAllowed() throws {
        let outcome = try Self.testCAVerifier(environments: [.production]).verify(
            Self.sample("transactionInfo"), as: .transaction)
        #expect(outcome.reason == VerificationFailure.wrongEnvironment.rawValue, "\(outcome)")
    }

    @Test func kindIsInferredFromAppleSamplePayloads() throws {
        #expect(SignedPayloadKind(inferringFrom: try Self.sample("transactionInfo")) == .transaction)
        #expect(SignedPayloadKind(inferringFrom: try Self.sample("renewalInfo")) == .renewalInfo)
        #expect(SignedPayloadKind(inferringFrom: try Self.sample("testNotification")) == .notification)
    }
}
