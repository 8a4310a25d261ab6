import Crypto
import Dispatch
import Foundation
import X509

/// Verifies Apple-signed compact JWS (transactions, renewal info, notifications V2) offline.
///
/// Checks, in order (the first failure wins; the table in `docs/verification.md` numbers them):
/// 1. header `alg` is exactly `ES256` → `bad-alg`;
/// 2. `x5c` holds exactly three certificates → `bad-chain`;
/// 3. the payload's claims decode and carry `signedDate` → `bad-format`;
/// 4. leaf and intermediate parse and the leaf key is P-256 → `bad-chain`;
/// 5. leaf → x5c intermediate validates to one of the configured roots (RFC 5280, swift-certificates
///    `Verifier`); the x5c root is ignored → `chain-untrusted`;
/// 6. the intermediate carries OID 1.2.840.113635.100.6.2.1 and the leaf 1.2.840.113635.100.6.11.1 →
///    `oid-missing`;
/// 7. every certificate of the chain is valid at `signedDate` → `expired`;
/// 8. the ES256 signature (raw r‖s) over `header.payload` verifies with the leaf key → `bad-signature`;
/// 9. the claims match the ``VerificationPolicy`` → `wrong-bundle`, `wrong-environment`, `wrong-app`.
///
/// Chain verdicts (steps 4–6 and the validity window) are cached per (leaf, intermediate) DER pair, so a
/// payload signed by an already seen chain costs one ES256 verification plus decoding. The verifier never
/// traps: every problem is a `.failed` outcome with a reason and a detail. It is safe to use from many
/// threads at once.
public final class JWSVerifier: Sendable {
    /// Why a verifier could not be created.
    public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// The apps and environments accepted.
    public let policy: VerificationPolicy
    private let evaluator: CertificateChainEvaluator
    private let cache = ChainValidationCache()
    private let decoder = JSONDecoder()

    /// Creates a verifier trusting exactly `trustedRootsDER` (DER certificates) for `policy`.
    ///
    /// Throws ``ConfigurationError`` when no root is given or one is not a DER certificate.
    public init(trustedRootsDER: [Data], policy: VerificationPolicy) throws {
        guard !trustedRootsDER.isEmpty else {
            throw ConfigurationError(message: "no trusted root certificate configured")
        }
        var roots: [Certificate] = []
        for (index, der) in trustedRootsDER.enumerated() {
            do {
                roots.append(try Certificate(derEncoded: Array(der)))
            } catch {
                throw ConfigurationError(
                    message:
                        "trusted root #\(index + 1) is not a DER certificate: \(CertificateChainEvaluator.describe(error))"
                )
            }
        }
        self.evaluator = CertificateChainEvaluator(roots: roots)
        self.policy = policy
        BlockingAsyncRunner.startThread()
    }

    /// Number of chain verdicts currently cached (for tests and benchmarks).
    var cachedChainCount: Int { cache.count }

    // MARK: - Public entry points

    /// Verifies `jws` as a payload of `kind`. For `.notification` only the notification itself is checked;
    /// use ``verifyNotification(_:)`` to verify nested payloads too.
    public func verify(_ jws: CompactJWS, as kind: SignedPayloadKind) -> VerificationOutcome {
        switch verifySignature(jws) {
        case .failed(let outcome):
            return outcome
        case .passed(let claims):
            return checkClaims(claims, kind: kind)
        }
    }

    /// Verifies a notification and, each on its own, its nested `data.signedTransactionInfo`,
    /// `data.signedRenewalInfo` and `appData.signedAppTransactionInfo`. The overall outcome is the
    /// notification's own failure if it fails, else `nested-failed` if a nested payload fails, else verified.
    public func verifyNotification(_ jws: CompactJWS) -> NotificationVerification {
        let own = verify(jws, as: .notification)
        // Nested payloads are read from the (possibly unverified) payload; each proves itself.
        let claims = try? PayloadClaims.decode(jws, with: decoder).get()
        let data = claims?.data
        let transaction = data?.signedTransactionInfo.map { verifyNested($0, as: .transaction) }
        let renewal = data?.signedRenewalInfo.map { verifyNested($0, as: .renewalInfo) }
        let appTransaction = claims?.appData?.signedAppTransactionInfo.map { verifyNested($0, as: .appTransaction) }

        var overall = own
        if own.status == .verified {
            let nested: [(String, VerificationOutcome?)] = [
                ("signedTransactionInfo", transaction), ("signedRenewalInfo", renewal),
                ("signedAppTransactionInfo", appTransaction),
            ]
            for case (let name, let outcome?) in nested where outcome.status != .verified {
                overall = .failed(
                    .nestedFailed,
                    "\(name): \(outcome.reason ?? "failed")\(outcome.detail.map { " — \($0)" } ?? "")"
                )
                break
            }
        }
        return NotificationVerification(
            outcome: overall, transaction: transaction, renewal: renewal, appTransaction: appTransaction)
    }

    /// Verifies many payloads on all cores. The result has one outcome per item, in the same order,
    /// each equal to what ``verify(_:as:)`` returns for it.
    public func verifyAll(_ items: [(CompactJWS, SignedPayloadKind)]) -> [VerificationOutcome] {
        ParallelMap.map(items) { [self] in verify($0.0, as: $0.1) }
    }

    /// Verifies records of `iapguard verify` on all cores: notifications with their nested payloads
    /// (``verifyNotification(_:)``), other kinds on their own, unreadable records as their `bad-format`
    /// outcome. One result per record, in order.
    public func verifyAll(_ records: [SignedRecord]) -> [NotificationVerification] {
        ParallelMap.map(records) { [self] in verify($0) }
    }

    /// Verifies one record of `iapguard verify` (see ``verifyAll(_:)-([SignedRecord])``).
    public func verify(_ record: SignedRecord) -> NotificationVerification {
        switch record.content {
        case .invalid(let outcome):
            return NotificationVerification(outcome: outcome)
        case .jws(let jws):
            // A payload of no recognisable kind is checked as a notification, whose claims it then fails.
            guard let kind = record.kind, kind != .notification else { return verifyNotification(jws) }
            return NotificationVerification(outcome: verify(jws, as: kind))
        }
    }

    // MARK: - Steps

    /// Steps 1–8 of `docs/verification.md`: header, chain, OIDs, validity at `signedDate` and signature.
    /// Returns the claims on success.
    private func verifySignature(_ jws: CompactJWS) -> SignatureStep {
        guard let alg = jws.algorithm else {
            return .failed(.failed(.badAlg, "header has no alg"))
        }
        guard alg == "ES256" else {
            return .failed(.failed(.badAlg, "header alg is '\(alg)', only ES256 is accepted"))
        }
        let decoded = PayloadClaims.decode(jws, with: decoder)
        // Xcode and LocalTesting payloads are signed on the developer's Mac, never by Apple: no chain leads to
        // Apple's roots, and calling them forged (`bad-chain`) would hide what they are. They are not Apple's
        // truth either: `wrong-environment`, which IAP-017 judges against the testers list.
        if case .success(let peeked) = decoded, let local = peeked.locallySignedEnvironment {
            return .failed(
                .failed(
                    .wrongEnvironment,
                    "\(local.rawValue) payloads are signed locally, never by Apple (the signature is not checked)"))
        }
        let x5c = jws.certificateChainDER
        guard x5c.count == 3 else {
            return .failed(
                .failed(.badChain, "x5c has \(x5c.count) certificates, expected 3 (leaf, intermediate, root)"))
        }
        let claims: PayloadClaims
        switch decoded {
        case .failure(let problem):
            return .failed(.failed(.badFormat, problem.detail))
        case .success(let decoded):
            claims = decoded
        }
        guard let signedAt = claims.signedAt else {
            return .failed(.failed(.badFormat, "payload has no signedDate"))
        }

        let key = ChainValidationCache.Key(leafDER: x5c[0], intermediateDER: x5c[1])
        let verdict: ChainVerdict
        if let cached = cache.verdict(for: key) {
            verdict = cached
        } else {
            verdict = evaluator.evaluate(leafDER: x5c[0], intermediateDER: x5c[1], validationTime: signedAt)
            cache.store(verdict, for: key)
        }
        let chain: TrustedChain
        switch verdict {
        case .rejected(let reason, let detail):
            return .failed(.failed(reason, detail))
        case .trusted(let trusted):
            chain = trusted
        }
        if let problem = chain.expiryProblem(at: signedAt) {
            return .failed(.failed(.expired, problem))
        }

        guard let signature = try? P256.Signing.ECDSASignature(rawRepresentation: jws.signature) else {
            return .failed(
                .failed(.badSignature, "signature is \(jws.signature.count) bytes, ES256 needs raw r||s of 64"))
        }
        guard chain.leafKey.isValidSignature(signature, for: Self.signingInput(of: jws)) else {
            return .failed(.failed(.badSignature, "ES256 signature does not verify with the leaf key"))
        }
        return .passed(claims)
    }

    /// The ASCII bytes of `header.payload` (``CompactJWS/signingInput``, a prefix of the UTF-8 bytes whose
    /// length the parse recorded).
    static func signingInput(of jws: CompactJWS) -> Data {
        jws.signingInput
    }

    /// The `bad-format` detail of a notification whose claims hold no `data`, `summary` or `appData` (checked
    /// after its signature and chain passed): ingest calls one about a transaction `incomplete`.
    static let noNotificationData = "notification has neither data, summary nor appData"

    /// Step 9 of `docs/verification.md`: the claims against the policy.
    private func checkClaims(_ claims: PayloadClaims, kind: SignedPayloadKind) -> VerificationOutcome {
        switch kind {
        case .transaction:
            guard let bundleID = claims.bundleId else {
                return .failed(.badFormat, "transaction has no bundleId")
            }
            guard let app = policy.app(bundleID: bundleID) else {
                return .failed(.wrongBundle, "bundleId '\(bundleID)' is not a configured app")
            }
            return checkEnvironment(claims.environment, allowed: app.environments, owner: "app '\(bundleID)'")

        case .renewalInfo:
            return checkEnvironment(claims.environment, allowed: policy.anyAppEnvironments, owner: "any configured app")

        case .appTransaction:
            guard let bundleID = claims.bundleId else {
                return .failed(.badFormat, "app transaction has no bundleId")
            }
            guard let app = policy.app(bundleID: bundleID) else {
                return .failed(.wrongBundle, "bundleId '\(bundleID)' is not a configured app")
            }
            return checkEnvironment(claims.receiptType, allowed: app.environments, owner: "app '\(bundleID)'")

        case .notification:
            guard let data = claims.data ?? claims.summary ?? claims.appData else {
                return .failed(.badFormat, Self.noNotificationData)
            }
            guard let bundleID = data.bundleId else {
                return .failed(.badFormat, "notification data has no bundleId")
            }
            guard let app = policy.app(bundleID: bundleID) else {
                return .failed(.wrongBundle, "bundleId '\(bundleID)' is not a configured app")
            }
            let environmentOutcome = checkEnvironment(
                data.environment, allowed: app.environments, owner: "app '\(bundleID)'")
            guard environmentOutcome.status == .verified else { return environmentOutcome }
            if AppleEnvironment(appleValue: data.environment ?? "") == .production, let expected = app.appAppleID,
                data.appAppleId != expected
            {
                let found = data.appAppleId.map(String.init) ?? "none"
                return .failed(.wrongApp, "appAppleId \(found) is not \(expected), configured for '\(bundleID)'")
            }
            return .verified
        }
    }

    private func checkEnvironment(_ value: String?, allowed: Set<AppleEnvironment>, owner: String)
        -> VerificationOutcome
    {
        guard let value else {
            return .failed(.badFormat, "payload has no environment")
        }
        guard let environment = AppleEnvironment(appleValue: value) else {
            return .failed(.wrongEnvironment, "unknown environment '\(value)'")
        }
        guard environment.isSignedByApple else {
            return .failed(.wrongEnvironment, "\(environment.rawValue) payloads are signed locally, never by Apple")
        }
        guard allowed.contains(environment) else {
            let names = allowed.map(\.rawValue).sorted().joined(separator: ", ")
            return .failed(
                .wrongEnvironment,
                "\(environment.rawValue) is not allowed for \(owner) (allowed: \(names.isEmpty ? "none" : names))")
        }
        return .verified
    }

    private func verifyNested(_ compact: String, as kind: SignedPayloadKind) -> VerificationOutcome {
        do {
            return verify(try CompactJWS(compact), as: kind)
        } catch {
            return .failed(.badFormat, "nested \(kind.rawValue) is not a compact JWS: \(error)")
        }
    }
}

/// The result of the signature steps: the claims to check next, or the failure.
private enum SignatureStep {
    case passed(PayloadClaims)
    case failed(VerificationOutcome)
}
