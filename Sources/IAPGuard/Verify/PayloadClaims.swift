import Foundation

/// The claims ``JWSVerifier`` reads from a signed payload; everything else is ignored here.
struct PayloadClaims: Decodable, Sendable {
    /// Claims of a notification's `data` or `summary` object.
    struct NotificationData: Decodable, Sendable {
        var bundleId: String?
        var environment: String?
        var appAppleId: Int64?
        var signedTransactionInfo: String?
        var signedRenewalInfo: String?
    }

    /// Milliseconds since 1970 when Apple signed the payload.
    var signedDate: Double?
    var bundleId: String?
    var environment: String?
    var data: NotificationData?
    var summary: NotificationData?

    /// `signedDate` as a date, or `nil` when absent.
    var signedAt: Date? {
        signedDate.map { Date(timeIntervalSince1970: $0 / 1000) }
    }

    /// Decodes the claims, returning a `bad-format` detail on failure.
    static func decode(_ json: Data, with decoder: JSONDecoder) -> Result<PayloadClaims, DecodeProblem> {
        do {
            return .success(try decoder.decode(PayloadClaims.self, from: json))
        } catch {
            return .failure(DecodeProblem(detail: "payload claims not decodable: \(error)"))
        }
    }

    struct DecodeProblem: Error, Sendable {
        var detail: String
    }
}
