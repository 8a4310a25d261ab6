import Crypto
import Foundation
@_spi(FixedExpiryValidationTime) @_spi(DisableValidityCheck) import X509

/// Validates an x5c (leaf, intermediate) pair to the configured roots with swift-certificates'
/// `Verifier` and the RFC 5280 policy, then checks Apple's marker OIDs.
///
/// The root inside `x5c` is never used: only the configured roots can anchor a chain, and the x5c
/// intermediate is the only untrusted intermediate offered to the path builder.
struct CertificateChainEvaluator: Sendable {
    let roots: CertificateStore

    init(roots: [Certificate]) {
        self.roots = CertificateStore(roots)
    }

    /// Evaluates the chain at `validationTime` (the payload's `signedDate`).
    ///
    /// A chain that validates only when validity periods are ignored is still returned as `.trusted`
    /// (with its validity window), so the caller reports `expired` rather than `chain-untrusted` and
    /// the verdict can be cached for payloads signed at other times.
    func evaluate(leafDER: Data, intermediateDER: Data, validationTime: Date) -> ChainVerdict {
        let leaf: Certificate
        let intermediate: Certificate
        do {
            leaf = try Certificate(derEncoded: Array(leafDER))
        } catch {
            return .rejected(.badChain, "x5c[0] (leaf) is not a DER certificate: \(Self.describe(error))")
        }
        do {
            intermediate = try Certificate(derEncoded: Array(intermediateDER))
        } catch {
            return .rejected(.badChain, "x5c[1] (intermediate) is not a DER certificate: \(Self.describe(error))")
        }
        guard let leafKey = P256.Signing.PublicKey(leaf.publicKey) else {
            return .rejected(.badChain, "leaf '\(leaf.subject)' key is not P-256, ES256 needs P-256")
        }

        let roots = self.roots
        let timed = BlockingAsyncRunner.run {
            var verifier = Verifier(rootCertificates: roots) {
                RFC5280Policy(fixedExpiryValidationTime: validationTime)
            }
            return await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
        }
        var validated: [Certificate]?
        var policyFailure: String?
        switch timed {
        case .validCertificate(let chain):
            validated = Array(chain)
        case .couldNotValidate(let failures):
            policyFailure = failures.first.map { String(describing: $0.policyFailureReason) }
            // Distinguish "expired" from "untrusted": does it validate when validity is ignored?
            let untimed = BlockingAsyncRunner.run {
                var verifier = Verifier(rootCertificates: roots) {
                    RFC5280Policy.withValidityCheckDisabled()
                }
                return await verifier.validate(leaf: leaf, intermediates: CertificateStore([intermediate]))
            }
            if case .validCertificate(let chain) = untimed {
                validated = Array(chain)
            }
        case nil:
            return .rejected(.chainUntrusted, "chain validation produced no result")
        }

        guard let chain = validated else {
            var detail =
                "leaf '\(leaf.subject)' via intermediate '\(intermediate.subject)' "
                + "does not chain to a configured trusted root (issuer '\(intermediate.issuer)')"
            if let policyFailure { detail += ": \(policyFailure)" }
            return .rejected(.chainUntrusted, detail)
        }
        guard chain.count == 3, chain[1] == intermediate else {
            return .rejected(
                .chainUntrusted,
                "validated path \(chain.map { "'\($0.subject)'" }.joined(separator: " -> ")) "
                    + "is not leaf -> x5c intermediate -> configured root"
            )
        }
        guard intermediate.extensions[oid: AppleMarkerOID.intermediate] != nil else {
            return .rejected(
                .oidMissing,
                "intermediate '\(intermediate.subject)' lacks Apple marker OID \(AppleMarkerOID.intermediate)"
            )
        }
        guard leaf.extensions[oid: AppleMarkerOID.leaf] != nil else {
            return .rejected(.oidMissing, "leaf '\(leaf.subject)' lacks Apple marker OID \(AppleMarkerOID.leaf)")
        }
        let roles = ["leaf", "intermediate", "root"]
        let validities = zip(roles, chain).map { role, certificate in
            TrustedChain.Validity(
                role: role,
                subject: String(describing: certificate.subject),
                notBefore: certificate.notValidBefore,
                notAfter: certificate.notValidAfter
            )
        }
        return .trusted(TrustedChain(leafKey: leafKey, validities: validities))
    }

    /// A certificate parse error for a message, without the library's source file and line
    /// (`ASN1Error.truncatedASN1Field: SwiftASN1/ASN1.swift:202` → `ASN.1 truncatedASN1Field`).
    static func describe(_ error: any Error) -> String {
        var text = "\(error)"
        if let location = text.range(of: #"\s*\S+\.swift:\d+$"#, options: .regularExpression) {
            text.removeSubrange(location)
        }
        if text.hasPrefix("ASN1Error.") { text = "ASN.1 " + text.dropFirst("ASN1Error.".count) }
        return text.trimmingCharacters(in: CharacterSet(charactersIn: ": "))
    }
}
