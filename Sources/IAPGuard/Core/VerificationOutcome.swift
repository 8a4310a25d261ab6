/// What the verify stage concluded about one Apple record.
///
/// Only `.verified` is Apple's truth. `.notSigned` marks legacy `verifyReceipt` responses, which are
/// Apple's answer as the backend stored it and cannot be re-checked offline. `.unverified` means nothing
/// checked the record yet; `.failed` records are quarantined and never used as Apple's truth.
public struct VerificationOutcome: Sendable, Hashable, Codable {
    /// The coarse state, stored in the `verification` column.
    public enum Status: String, Sendable, Hashable, Codable, CaseIterable {
        case verified
        case failed
        case notSigned = "not-signed"
        case unverified
    }

    public var status: Status
    /// A machine-readable reason (see ``VerificationFailure``) for `.failed`, or a note for `.notSigned`
    /// (the legacy `status` code) — `nil` for `.verified`.
    public var reason: String?
    /// Human-readable detail (which certificate, which claim, what was expected).
    public var detail: String?

    public init(status: Status, reason: String? = nil, detail: String? = nil) {
        self.status = status
        self.reason = reason
        self.detail = detail
    }

    public static let verified = VerificationOutcome(status: .verified)
    public static let unverified = VerificationOutcome(status: .unverified, reason: "not-checked")

    /// A failure with a reason code and detail.
    public static func failed(_ reason: VerificationFailure, _ detail: String? = nil) -> VerificationOutcome {
        VerificationOutcome(status: .failed, reason: reason.rawValue, detail: detail)
    }

    /// Precedence when several sightings of one transaction disagree: verified beats not-signed beats
    /// unverified beats failed. A failed sighting never becomes the canonical row.
    public var precedence: Int {
        switch status {
        case .verified: return 3
        case .notSigned: return 2
        case .unverified: return 1
        case .failed: return 0
        }
    }
}

/// Why a signed payload failed verification. The raw values are stable and documented in `docs/`.
public enum VerificationFailure: String, Sendable, Hashable, Codable, CaseIterable {
    /// Not three base64url parts, undecodable base64 or JSON, missing required header or claims.
    case badFormat = "bad-format"
    /// `alg` is not `ES256` (`none`, `HS256`, missing, ...).
    case badAlg = "bad-alg"
    /// `x5c` missing or not exactly three certificates, or unparsable certificates.
    case badChain = "bad-chain"
    /// The chain does not lead to a configured trusted root.
    case chainUntrusted = "chain-untrusted"
    /// The intermediate or leaf lacks Apple's marker OID.
    case oidMissing = "oid-missing"
    /// A certificate is not valid at the payload's `signedDate`.
    case expired = "expired"
    /// The ES256 signature does not verify with the leaf key.
    case badSignature = "bad-signature"
    /// `bundleId` is not one of the configured apps.
    case wrongBundle = "wrong-bundle"
    /// `environment` is not allowed for this app (or is Xcode / LocalTesting).
    case wrongEnvironment = "wrong-environment"
    /// A notification's `appAppleId` does not match the configured app (Production).
    case wrongApp = "wrong-app"
    /// A payload nested in a notification failed its own verification.
    case nestedFailed = "nested-failed"
    /// A notification about a transaction, signed by Apple, without the signed transaction it is about.
    case incomplete = "incomplete"
    /// A legacy `verifyReceipt` response whose `status` cannot carry the purchases it holds: Apple decodes the
    /// receipt only when it is valid (0) or holds an expired auto-renewable subscription (21006), so purchases
    /// under an error status, or a 21006 answer without any purchase that expires, were written by someone else.
    case impossibleReceiptStatus = "impossible-receipt-status"

    /// Whether a payload that failed for this reason still carries a valid Apple signature and chain: the
    /// claims check (the last step) failed, so the purchase is genuine but not for one of our apps or
    /// environments (a bundle-id mismatch, IAP-004), never a forgery. Every other reason means the
    /// signature or chain could not be trusted.
    public var isGenuineButNotOurs: Bool {
        switch self {
        case .wrongBundle, .wrongEnvironment, .wrongApp: return true
        default: return false
        }
    }

    /// The raw values of the reasons for which ``isGenuineButNotOurs`` holds (what rules compare with).
    public static let genuineButNotOursReasons = allCases.filter(\.isGenuineButNotOurs).map(\.rawValue)
}
