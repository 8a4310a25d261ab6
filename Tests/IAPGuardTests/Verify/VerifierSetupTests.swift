import Foundation
import Testing

@testable import IAPGuard

/// `iapguard verify --config`: the config gives the default roots, apps and environments.
@Suite struct VerifierSetupTests {
    /// A folder with `certs/test-root.der` (the `good` test chain's root) and a config trusting it.
    static func configFolder(trustAppleRoot: Bool = true) throws -> Config {
        let directory = TestScratch.root.appendingPathComponent("iapguard-setup-\(UUID())")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("certs"), withIntermediateDirectories: true)
        try VerifyTestWorld.good.rootDER.write(to: directory.appendingPathComponent("certs/test-root.der"))
        let yaml = """
            trust: [certs/test-root.der]
            trust_apple_root: \(trustAppleRoot)
            apps:
              - bundle_id: com.example.coins
                app_apple_id: 42
                environments: [Production, Sandbox]
              - bundle_id: com.example.other
            sources: []
            """
        let url = directory.appendingPathComponent("iapguard.yml")
        try Data(yaml.utf8).write(to: url)
        return try Config.load(from: url)
    }

    static func verify(_ setup: VerifierSetup, _ payload: Data) throws -> VerificationOutcome {
        let verifier = try JWSVerifier(trustedRootsDER: setup.trustedRootsDER, policy: setup.policy)
        return verifier.verify(try CompactJWS(try VerifyTestWorld.good.sign(payload: payload)), as: .transaction)
    }

    @Test func theConfigGivesRootsAppsEnvironmentsAndAppleIDs() throws {
        let config = try Self.configFolder()
        let setup = try VerifierSetup(
            config: config, trustedRootsDER: [], bundleIDs: [], environments: nil, appAppleID: nil)
        #expect(setup.trustedRootsDER == [AppleRootCertificates.appleRootCAG3DER, VerifyTestWorld.good.rootDER])
        #expect(
            setup.policy.apps == [
                .init(bundleID: "com.example.coins", appAppleID: 42, environments: [.production, .sandbox]),
                .init(bundleID: "com.example.other", environments: [.production]),
            ])
        #expect(try Self.verify(setup, VerifyTestWorld.transaction(environment: "Sandbox")) == .verified)
        let other = try Self.verify(
            setup, VerifyTestWorld.transaction(bundleID: "com.example.other", environment: "Sandbox"))
        #expect(other.reason == VerificationFailure.wrongEnvironment.rawValue)
    }

    @Test func withoutTheAppleRootOnlyTheConfiguredRootsAreTrusted() throws {
        let setup = try VerifierSetup(
            config: try Self.configFolder(trustAppleRoot: false), trustedRootsDER: [], bundleIDs: [],
            environments: nil, appAppleID: nil)
        #expect(setup.trustedRootsDER == [VerifyTestWorld.good.rootDER])
    }

    @Test func commandLineOptionsReplaceTheConfigDefaults() throws {
        let config = try Self.configFolder()
        let onlyProduction = try VerifierSetup(
            config: config, trustedRootsDER: [], bundleIDs: [], environments: [.production], appAppleID: nil)
        #expect(onlyProduction.policy.apps.map(\.environments) == [[.production], [.production]])
        #expect(
            try Self.verify(onlyProduction, VerifyTestWorld.transaction(environment: "Sandbox")).reason
                == VerificationFailure.wrongEnvironment.rawValue)

        let otherRoot = try VerifierSetup(
            config: config, trustedRootsDER: [VerifyTestWorld.other.rootDER], bundleIDs: ["com.example.coins"],
            environments: nil, appAppleID: 7)
        #expect(otherRoot.trustedRootsDER == [VerifyTestWorld.other.rootDER])
        #expect(otherRoot.policy.apps == [.init(bundleID: "com.example.coins", appAppleID: 7)])
        #expect(
            try Self.verify(otherRoot, VerifyTestWorld.transaction()).reason
                == VerificationFailure.chainUntrusted.rawValue)
    }

    @Test func withoutConfigTheAppleRootAndTheGivenBundlesAreUsed() throws {
        let setup = try VerifierSetup(
            config: nil, trustedRootsDER: [], bundleIDs: ["a.b"], environments: nil, appAppleID: nil)
        #expect(setup.trustedRootsDER == [AppleRootCertificates.appleRootCAG3DER])
        #expect(setup.policy.apps == [.init(bundleID: "a.b", environments: [.production])])
    }

    @Test func noBundleAndNoConfigIsAnError() {
        #expect(throws: VerifierSetup.SetupError.self) {
            try VerifierSetup(config: nil, trustedRootsDER: [], bundleIDs: [], environments: nil, appAppleID: nil)
        }
    }

    @Test func anAppleIDWithConfigAppsIsAnError() throws {
        let config = try Self.configFolder()
        #expect(throws: VerifierSetup.SetupError.self) {
            try VerifierSetup(config: config, trustedRootsDER: [], bundleIDs: [], environments: nil, appAppleID: 42)
        }
    }
}
