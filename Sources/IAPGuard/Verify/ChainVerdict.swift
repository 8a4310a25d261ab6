import Crypto
import Foundation

/// What chain evaluation concluded about one (leaf, intermediate) pair, independent of any one payload.
///
/// A trusted chain keeps its validity window so that each payload's `signedDate` is re-checked against
/// it; a rejection is time-independent and always yields the same reason and detail.
enum ChainVerdict: Sendable {
    /// The chain leads to a configured root and carries Apple's marker OIDs.
    case trusted(TrustedChain)
    /// The chain is rejected for a reason that does not depend on the validation time.
    case rejected(VerificationFailure, String)
}

/// A chain that validated (structure, signatures and policy) to a configured root.
///
/// `@unchecked Sendable` only because swift-crypto does not mark `P256.Signing.PublicKey` Sendable: the
/// key is an immutable value, never mutated after creation, and BoringSSL's verify is read-only on it.
struct TrustedChain: @unchecked Sendable {
    /// One certificate's validity, kept to explain an `expired` failure.
    struct Validity: Sendable {
        var role: String
        var subject: String
        var notBefore: Date
        var notAfter: Date
    }

    /// The leaf's P-256 key that ES256 signatures are verified with.
    var leafKey: P256.Signing.PublicKey
    /// Leaf, intermediate and root validity, in that order.
    var validities: [Validity]
    /// The intersection of all validity periods.
    var notBefore: Date
    var notAfter: Date

    init(leafKey: P256.Signing.PublicKey, validities: [Validity]) {
        self.leafKey = leafKey
        self.validities = validities
        self.notBefore = validities.map(\.notBefore).max() ?? .distantFuture
        self.notAfter = validities.map(\.notAfter).min() ?? .distantPast
    }

    /// `nil` when every certificate is valid at `date`, else a detail naming the first one that is not.
    func expiryProblem(at date: Date) -> String? {
        if date >= notBefore && date <= notAfter { return nil }
        let stamp = ISO8601DateFormatter.string(from: date, timeZone: .gmt, formatOptions: [.withInternetDateTime])
        for validity in validities where date < validity.notBefore || date > validity.notAfter {
            let bound =
                date < validity.notBefore
                ? "not valid before \(Self.format(validity.notBefore))"
                : "expired \(Self.format(validity.notAfter))"
            return "\(validity.role) certificate '\(validity.subject)' \(bound); signedDate is \(stamp)"
        }
        return "certificates not valid at signedDate \(stamp)"
    }

    private static func format(_ date: Date) -> String {
        ISO8601DateFormatter.string(from: date, timeZone: .gmt, formatOptions: [.withInternetDateTime])
    }
}
