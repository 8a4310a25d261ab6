import Foundation
import Testing

@testable import IAPGuard

/// Claim checks (bundle, environment, app) and notifications with nested payloads.
@Suite struct JWSVerifierClaimsTests {
    typealias World = VerifyTestWorld

    func reason(_ outcome: VerificationOutcome?) -> VerificationFailure? {
        outcome?.reason.flatMap(VerificationFailure.init(rawValue:))
    }

    @Test func transactionForAnotherBundleIsWrongBundle() throws {
        let outcome = try World.verifier().verify(
            World.jws(World.transaction(bundleID: "com.example.cheapsister")), as: .transaction)
        #expect(reason(outcome) == .wrongBundle, "\(outcome)")
        #expect(outcome.detail?.contains("com.example.cheapsister") == true)
    }

    @Test func sandboxTransactionFailsWhenOnlyProductionIsAllowed() throws {
        let outcome = try World.verifier(environments: [.production])
            .verify(World.jws(World.transaction(environment: "Sandbox")), as: .transaction)
        #expect(reason(outcome) == .wrongEnvironment, "\(outcome)")
    }

    @Test func sandboxTransactionVerifiesWhenSandboxIsAllowed() throws {
        let outcome = try World.verifier().verify(
            World.jws(World.transaction(environment: "Sandbox")), as: .transaction)
        #expect(outcome == .verified, "\(outcome)")
    }

    @Test(arguments: ["Xcode", "LocalTesting"])
    func locallySignedEnvironmentsAreNeverVerifiedEvenWhenConfigured(environment: String) throws {
        let verifier = try World.verifier(environments: Set(AppleEnvironment.allCases))
        let outcome = verifier.verify(try World.jws(World.transaction(environment: environment)), as: .transaction)
        #expect(reason(outcome) == .wrongEnvironment, "\(outcome)")
    }

    /// Xcode signs StoreKit testing payloads with a certificate of the developer's Mac (one certificate, or
    /// any chain not Apple's): they are what they say, not forgeries, so the environment answers first. A
    /// Production payload from the same chain is still refused for its chain.
    @Test(arguments: ["Xcode", "LocalTesting"])
    func aLocallySignedPayloadFromALocalCertificateIsWrongEnvironmentNotAForgery(environment: String) throws {
        let verifier = try World.verifier()
        let local = World.other
        let selfSigned = try CompactJWS(
            try local.sign(
                payload: World.transaction(environment: environment),
                header: ["alg": "ES256", "x5c": [local.leafDER.base64EncodedString()]]))
        #expect(reason(verifier.verify(selfSigned, as: .transaction)) == .wrongEnvironment)
        let otherChain = try World.jws(World.transaction(environment: environment), by: local)
        #expect(reason(verifier.verify(otherChain, as: .transaction)) == .wrongEnvironment)
        let production = try World.jws(World.transaction(environment: "Production"), by: local)
        #expect(reason(verifier.verify(production, as: .transaction)) == .chainUntrusted)
    }

    @Test(arguments: ["Xcode", "LocalTesting"])
    func locallySignedNotificationsAndRenewalsAreNeverVerifiedEvenWhenConfigured(environment: String) throws {
        let verifier = try World.verifier(environments: Set(AppleEnvironment.allCases))
        let notification = verifier.verify(
            try World.jws(World.notification(environment: environment)), as: .notification)
        #expect(reason(notification) == .wrongEnvironment, "\(notification)")
        let renewal = verifier.verify(try World.jws(World.renewal(environment: environment)), as: .renewalInfo)
        #expect(reason(renewal) == .wrongEnvironment, "\(renewal)")
    }

    @Test(arguments: ["Xcode", "LocalTesting"])
    func aProductionNotificationCarryingALocallySignedTransactionDoesNotVerifyIt(environment: String) throws {
        let verifier = try World.verifier(environments: Set(AppleEnvironment.allCases))
        let inner = try World.good.sign(payload: World.transaction(environment: environment))
        let result = verifier.verifyNotification(
            try World.jws(World.notification(signedTransactionInfo: inner)))
        #expect(reason(result.transaction) == .wrongEnvironment, "\(result)")
        #expect(reason(result.outcome) == .nestedFailed, "\(result)")
    }

    @Test func renewalInfoChecksEnvironmentOnly() throws {
        let verifier = try World.verifier(environments: [.production])
        #expect(verifier.verify(try World.jws(World.renewal()), as: .renewalInfo) == .verified)
        #expect(
            reason(verifier.verify(try World.jws(World.renewal(environment: "Sandbox")), as: .renewalInfo))
                == .wrongEnvironment)
    }

    @Test func productionNotificationWithConfiguredAppAppleIDVerifies() throws {
        let result = try World.verifier().verifyNotification(World.jws(World.notification()))
        #expect(result.outcome == .verified, "\(result.outcome)")
    }

    @Test func productionNotificationForAnotherAppAppleIDIsWrongApp() throws {
        let outcome = try World.verifier().verify(World.jws(World.notification(appAppleID: 999)), as: .notification)
        #expect(reason(outcome) == .wrongApp, "\(outcome)")
    }

    @Test func productionNotificationWithoutAppAppleIDIsWrongAppWhenOneIsConfigured() throws {
        let outcome = try World.verifier().verify(World.jws(World.notification(appAppleID: nil)), as: .notification)
        #expect(reason(outcome) == .wrongApp, "\(outcome)")
    }

    @Test func sandboxNotificationDoesNotCheckAppAppleID() throws {
        let outcome = try World.verifier().verify(
            World.jws(World.notification(environment: "Sandbox", appAppleID: 999)), as: .notification)
        #expect(outcome == .verified, "\(outcome)")
    }

    @Test func summaryNotificationClaimsAreReadFromSummary() throws {
        let verifier = try World.verifier()
        #expect(verifier.verify(try World.jws(World.notification(summary: true)), as: .notification) == .verified)
        let wrong = verifier.verify(
            try World.jws(World.notification(bundleID: "com.other", summary: true)), as: .notification)
        #expect(reason(wrong) == .wrongBundle)
    }

    @Test func notificationWithGenuineNestedPayloadsVerifiesAll() throws {
        let transaction = try World.good.sign(payload: World.transaction())
        let renewal = try World.good.sign(payload: World.renewal())
        let payload = World.notification(signedTransactionInfo: transaction, signedRenewalInfo: renewal)
        let result = try World.verifier().verifyNotification(World.jws(payload))
        #expect(result.outcome == .verified, "\(result.outcome)")
        #expect(result.transaction == .verified)
        #expect(result.renewal == .verified)
    }

    @Test func notificationWithForgedNestedTransactionFailsAsNestedFailed() throws {
        // The notification is genuine; the transaction inside is signed by an untrusted chain.
        let forgedTransaction = try World.other.sign(payload: World.transaction())
        let payload = World.notification(signedTransactionInfo: forgedTransaction)
        let verifier = try World.verifier(trusting: [World.good])
        let jws = try World.jws(payload)
        let result = verifier.verifyNotification(jws)
        #expect(reason(result.outcome) == .nestedFailed, "\(result.outcome)")
        #expect(result.outcome.detail?.contains("signedTransactionInfo") == true)
        #expect(reason(result.transaction) == .chainUntrusted)
        #expect(result.renewal == nil)
        #expect(verifier.verify(jws, as: .notification) == .verified)
    }

    @Test func notificationOwnFailureTakesPrecedenceOverNestedFailure() throws {
        let forgedTransaction = try World.other.sign(payload: World.transaction())
        let payload = World.notification(bundleID: "com.other", signedTransactionInfo: forgedTransaction)
        let result = try World.verifier(trusting: [World.good]).verifyNotification(World.jws(payload))
        #expect(reason(result.outcome) == .wrongBundle)
        #expect(reason(result.transaction) == .chainUntrusted)
    }

    @Test func nestedTransactionThatIsNotAJWSIsBadFormat() throws {
        let result = try World.verifier().verifyNotification(
            World.jws(World.notification(signedTransactionInfo: "not-a-jws")))
        #expect(reason(result.outcome) == .nestedFailed)
        #expect(reason(result.transaction) == .badFormat)
    }
}
