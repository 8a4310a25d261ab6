import Foundation
import Testing

@testable import IAPGuard

/// Signature, chain and header checks against generated chains.
@Suite struct JWSVerifierChainTests {
    typealias World = VerifyTestWorld

    func reason(_ outcome: VerificationOutcome) -> VerificationFailure? {
        outcome.reason.flatMap(VerificationFailure.init(rawValue:))
    }

    @Test func transactionSignedByTrustedP384ChainVerifies() throws {
        let outcome = try World.verifier().verify(World.jws(World.transaction()), as: .transaction)
        #expect(outcome == .verified, "\(outcome)")
    }

    @Test func transactionSignedByAllP256ChainVerifies() throws {
        let outcome = try World.verifier().verify(World.jws(World.transaction(), by: World.goodP256), as: .transaction)
        #expect(outcome == .verified, "\(outcome)")
    }

    @Test func chainClaimingConfiguredRootButIssuedByAnotherIsUntrusted() throws {
        // Leaf and intermediate of an impostor chain (same names), with the configured root in x5c[2].
        let forged = try World.other.sign(
            payload: World.transaction(),
            header: [
                "alg": "ES256",
                "x5c": [World.other.leafDER, World.other.intermediateDER, World.good.rootDER].map {
                    $0.base64EncodedString()
                },
            ]
        )
        let outcome = try World.verifier(trusting: [World.good]).verify(CompactJWS(forged), as: .transaction)
        #expect(reason(outcome) == .chainUntrusted, "\(outcome)")
    }

    @Test func rootCarriedOnlyInX5cIsNotTrusted() throws {
        // The chain is internally consistent, but its root is not configured.
        let outcome = try World.verifier(trusting: [World.good]).verify(
            World.jws(World.transaction(), by: World.other), as: .transaction)
        #expect(reason(outcome) == .chainUntrusted, "\(outcome)")
        #expect(outcome.detail?.contains("configured trusted root") == true, "\(outcome)")
    }

    @Test func intermediateWithoutAppleMarkerOIDFails() throws {
        let outcome = try World.verifier(trusting: [World.noIntermediateOID])
            .verify(World.jws(World.transaction(), by: World.noIntermediateOID), as: .transaction)
        #expect(reason(outcome) == .oidMissing, "\(outcome)")
        #expect(outcome.detail?.contains("intermediate") == true)
    }

    @Test func leafWithoutAppleMarkerOIDFails() throws {
        let outcome = try World.verifier(trusting: [World.noLeafOID])
            .verify(World.jws(World.transaction(), by: World.noLeafOID), as: .transaction)
        #expect(reason(outcome) == .oidMissing, "\(outcome)")
        #expect(outcome.detail?.contains("leaf") == true)
    }

    @Test func leafExpiredAtSignedDateFailsAsExpiredNotUntrusted() throws {
        // signedDate 2024 is after the leaf's notAfter (2021-01-01).
        let outcome = try World.verifier(trusting: [World.shortLivedLeaf])
            .verify(World.jws(World.transaction(), by: World.shortLivedLeaf), as: .transaction)
        #expect(reason(outcome) == .expired, "\(outcome)")
        #expect(outcome.detail?.contains("leaf") == true, "\(outcome)")
    }

    @Test func cachedChainWindowIsRecheckedForEachSignedDate() throws {
        let verifier = try World.verifier(trusting: [World.shortLivedLeaf])
        let chain = World.shortLivedLeaf
        let before = try World.jws(World.transaction(signedDate: 1_546_300_800_000), by: chain)  // 2019-01-01
        let inside = try World.jws(World.transaction(signedDate: 1_590_969_600_000), by: chain)  // 2020-06-01
        let after = try World.jws(World.transaction(), by: chain)  // 2024-06-01
        #expect(reason(verifier.verify(after, as: .transaction)) == .expired)
        #expect(verifier.verify(inside, as: .transaction) == .verified)
        #expect(reason(verifier.verify(before, as: .transaction)) == .expired)
        #expect(verifier.cachedChainCount == 1)
    }

    @Test func flippedSignatureByteFails() throws {
        let text = try World.good.sign(payload: World.transaction())
        var parts = text.split(separator: ".").map(String.init)
        var signature = try #require(Base64URL.decode(parts[2]))
        signature[10] ^= 0x01
        parts[2] = Base64URL.encode(signature)
        let outcome = try World.verifier().verify(CompactJWS(parts.joined(separator: ".")), as: .transaction)
        #expect(reason(outcome) == .badSignature, "\(outcome)")
    }

    @Test func payloadChangedAfterSigningFails() throws {
        let text = try World.good.sign(payload: World.transaction(bundleID: "com.example.cheap"))
        var parts = text.split(separator: ".").map(String.init)
        parts[1] = Base64URL.encode(World.transaction())
        let outcome = try World.verifier().verify(CompactJWS(parts.joined(separator: ".")), as: .transaction)
        #expect(reason(outcome) == .badSignature, "\(outcome)")
    }

    @Test func algNoneWithEmptySignatureIsRejected() throws {
        let header = Base64URL.encode(World.json(["alg": "none", "x5c": World.good.x5cBase64]))
        let compact = header + "." + Base64URL.encode(World.transaction()) + "."
        let outcome = try World.verifier().verify(CompactJWS(compact), as: .transaction)
        #expect(reason(outcome) == .badAlg, "\(outcome)")
    }

    @Test(arguments: ["HS256", "none", "es256", "ES384"])
    func nonES256AlgIsRejectedEvenWithValidSignature(alg: String) throws {
        let forged = try World.good.sign(
            payload: World.transaction(), header: ["alg": alg, "x5c": World.good.x5cBase64])
        let outcome = try World.verifier().verify(CompactJWS(forged), as: .transaction)
        #expect(reason(outcome) == .badAlg, "\(outcome)")
    }

    @Test func missingAlgIsRejected() throws {
        let forged = try World.good.sign(payload: World.transaction(), header: ["x5c": World.good.x5cBase64])
        let outcome = try World.verifier().verify(CompactJWS(forged), as: .transaction)
        #expect(reason(outcome) == .badAlg, "\(outcome)")
    }

    @Test func twoCertificateChainIsRejected() throws {
        let forged = try World.good.sign(
            payload: World.transaction(),
            header: ["alg": "ES256", "x5c": Array(World.good.x5cBase64.prefix(2))]
        )
        let outcome = try World.verifier().verify(CompactJWS(forged), as: .transaction)
        #expect(reason(outcome) == .badChain, "\(outcome)")
    }

    @Test func missingX5cIsRejected() throws {
        let forged = try World.good.sign(payload: World.transaction(), header: ["alg": "ES256"])
        let outcome = try World.verifier().verify(CompactJWS(forged), as: .transaction)
        #expect(reason(outcome) == .badChain, "\(outcome)")
    }

    @Test func garbageCertificateInX5cIsBadChain() throws {
        let x5c = [Data("not a certificate".utf8).base64EncodedString()] + World.good.x5cBase64.dropFirst()
        let forged = try World.good.sign(payload: World.transaction(), header: ["alg": "ES256", "x5c": Array(x5c)])
        let outcome = try World.verifier().verify(CompactJWS(forged), as: .transaction)
        #expect(reason(outcome) == .badChain, "\(outcome)")
    }

    @Test func payloadWithoutSignedDateIsBadFormat() throws {
        let outcome = try World.verifier().verify(World.jws(World.transaction(signedDate: nil)), as: .transaction)
        #expect(reason(outcome) == .badFormat, "\(outcome)")
    }

    @Test func secondVerifyFromCacheGivesIdenticalOutcomes() throws {
        let verifier = try World.verifier(trusting: [World.good])
        let cases: [(CompactJWS, SignedPayloadKind)] = [
            (try World.jws(World.transaction()), .transaction),
            (try World.jws(World.transaction(), by: World.other), .transaction),
            (try World.jws(World.transaction(), by: World.noLeafOID), .transaction),
            (try World.jws(World.transaction(bundleID: "com.other")), .transaction),
        ]
        let first = cases.map { verifier.verify($0.0, as: $0.1) }
        let countAfterFirst = verifier.cachedChainCount
        let second = cases.map { verifier.verify($0.0, as: $0.1) }
        #expect(first == second)
        #expect(first.map(\.status) == [.verified, .failed, .failed, .failed])
        #expect(countAfterFirst == 3)
        #expect(verifier.cachedChainCount == 3)
    }

    @Test func verifyAllMatchesVerifyInOrder() throws {
        let verifier = try World.verifier()
        var items: [(CompactJWS, SignedPayloadKind)] = []
        let chains = [World.good, World.goodP256, World.other, World.shortLivedLeaf]
        for index in 0..<120 {
            let chain = chains[index % chains.count]
            let environment = index % 5 == 0 ? "Xcode" : (index % 3 == 0 ? "Sandbox" : "Production")
            if index % 7 == 0 {
                items.append((try World.jws(World.renewal(environment: environment), by: chain), .renewalInfo))
            } else {
                items.append((try World.jws(World.transaction(environment: environment), by: chain), .transaction))
            }
        }
        let fresh = try World.verifier()
        let expected = items.map { fresh.verify($0.0, as: $0.1) }
        let all = verifier.verifyAll(items)
        #expect(all == expected)
        #expect(all.count == items.count)
        #expect(Set(all.map(\.status)) == [.verified, .failed])
    }

    @Test func verifierNeedsAtLeastOneParsableRoot() {
        #expect(throws: JWSVerifier.ConfigurationError.self) {
            try JWSVerifier(trustedRootsDER: [], policy: World.policy())
        }
        #expect(throws: JWSVerifier.ConfigurationError.self) {
            try JWSVerifier(trustedRootsDER: [Data("junk".utf8)], policy: World.policy())
        }
    }
}
