import Foundation
import Testing
import X509

@testable import IAPGuard
@testable import IAPGuardTesting

@Suite struct TestSigningChainTests {
    typealias World = VerifyTestWorld

    @Test func signedHeaderIsES256WithLeafIntermediateRoot() throws {
        let jws = try World.jws(World.transaction())
        #expect(jws.algorithm == "ES256")
        #expect(jws.certificateChainDER == [World.good.leafDER, World.good.intermediateDER, World.good.rootDER])
        #expect(jws.signature.count == 64)
    }

    @Test func writtenChainLoadsAndStillSignsVerifiablePayloads() throws {
        let directory = TestScratch.root
            .appendingPathComponent("iapguard-chain-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try World.good.write(to: directory)
        let loaded = try TestSigningChain.load(from: directory)
        #expect(loaded.rootDER == World.good.rootDER)
        #expect(loaded.leafDER == World.good.leafDER)
        let outcome = try World.verifier(trusting: [World.good]).verify(
            World.jws(World.transaction(), by: loaded), as: .transaction)
        #expect(outcome == .verified, "\(outcome)")
    }

    @Test func loadingRejectsAKeyThatDoesNotBelongToTheLeaf() throws {
        let directory = TestScratch.root
            .appendingPathComponent("iapguard-chain-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try World.good.write(to: directory)
        try World.other.write(to: directory.appendingPathComponent("other"))
        try FileManager.default.removeItem(at: directory.appendingPathComponent("leaf-key.pem"))
        try FileManager.default.copyItem(
            at: directory.appendingPathComponent("other/leaf-key.pem"),
            to: directory.appendingPathComponent("leaf-key.pem")
        )
        #expect(throws: TestSigningChain.ChainError.self) { try TestSigningChain.load(from: directory) }
    }

    @Test func deterministicSeedGivesTheSameKeys() throws {
        let first = try TestSigningChain.generate(options: .init(deterministicSeed: 7))
        let second = try TestSigningChain.generate(options: .init(deterministicSeed: 7))
        let third = try TestSigningChain.generate(options: .init(deterministicSeed: 8))
        func keys(_ chain: TestSigningChain) throws -> [Certificate.PublicKey] {
            try [chain.rootDER, chain.intermediateDER, chain.leafDER].map {
                try Certificate(derEncoded: Array($0)).publicKey
            }
        }
        #expect(try keys(first) == keys(second))
        #expect(try keys(first) != keys(third))
        #expect(first.leafKeyRaw == second.leafKeyRaw)
    }

    @Test(arguments: TestSigningChain.Options.Curve.allCases)
    func rootCurveOptionIsHonoured(curve: TestSigningChain.Options.Curve) throws {
        let chain = try TestSigningChain.generate(options: .init(rootCurve: curve))
        let root = try Certificate(derEncoded: Array(chain.rootDER))
        let leaf = try Certificate(derEncoded: Array(chain.leafDER))
        #expect(root.signatureAlgorithm == (curve == .p384 ? .ecdsaWithSHA384 : .ecdsaWithSHA256))
        #expect(leaf.publicKey.subjectPublicKeyInfoBytes.count == 65)  // uncompressed P-256 point
    }
}

@Suite struct SigningInputTests {
    @Test func fastSigningInputEqualsCompactJWSSigningInput() throws {
        let jws = try VerifyTestWorld.jws(VerifyTestWorld.transaction())
        #expect(JWSVerifier.signingInput(of: jws) == jws.signingInput)
        let apple = try CompactJWS(
            try String(contentsOf: Fixtures.local("apple/signed/transactionInfo"), encoding: .utf8))
        #expect(JWSVerifier.signingInput(of: apple) == apple.signingInput)
    }
}
