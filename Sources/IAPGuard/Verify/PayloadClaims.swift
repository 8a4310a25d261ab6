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
        /// `appData.signedAppTransactionInfo` (RESCIND_CONSENT and other app-level notifications).
        var signedAppTransactionInfo: String?
    }

    /// Milliseconds since 1970 when Apple signed the payload.
    var signedDate: Double?
    var bundleId: String?
    var environment: String?
    var data: NotificationData?
    var summary: NotificationData?
    /// A notification's `appData` (app-level notifications carry it instead of `data`).
    var appData: NotificationData?
    /// A signed app transaction's environment (`Production`, `Sandbox`, `Xcode`, …).
    var receiptType: String?

    /// The environment the payload claims (its own, or its notification data's) when Apple never signs it
    /// (Xcode, LocalTesting); `nil` otherwise.
    var locallySignedEnvironment: AppleEnvironment? {
        for value in [environment, data?.environment, summary?.environment, appData?.environment, receiptType] {
            if let value, let known = AppleEnvironment(appleValue: value), !known.isSignedByApple { return known }
        }
        return nil
    }

    /// `signedDate` as a date, or `nil` when absent.
    var signedAt: Date? {
        signedDate.map { Date(timeIntervalSince1970: $0 / 1000) }
    }

    /// The claims of `jws`: read from its byte-level parse when every claim there has the plain type
    /// `JSONDecoder` would accept, else decoded by `decoder` (which then also words any error).
    static func decode(_ jws: CompactJWS, with decoder: JSONDecoder) -> Result<PayloadClaims, DecodeProblem> {
        if let members = jws.payloadValue?.objectValue, let claims = PayloadClaims(fast: members) {
            return .success(claims)
        }
        return decode(jws.payloadJSON, with: decoder)
    }

    /// Decodes the claims, returning a `bad-format` detail on failure.
    static func decode(_ json: Data, with decoder: JSONDecoder) -> Result<PayloadClaims, DecodeProblem> {
        do {
            return .success(try decoder.decode(PayloadClaims.self, from: json))
        } catch {
            return .failure(DecodeProblem(detail: "payload claims not decodable: \(error)"))
        }
    }

    /// Claims from byte-level parsed members, or `nil` when a claim is not of a plain type (the caller then
    /// lets `JSONDecoder` decide, so acceptance and errors stay exactly those of the `Decodable` path).
    init?(fast members: [String: FastJSONValue]) {
        guard let signedDate = FastClaim.double(members["signedDate"]),
            let bundleId = FastClaim.string(members["bundleId"]),
            let environment = FastClaim.string(members["environment"]),
            let data = FastClaim.notificationData(members["data"]),
            let summary = FastClaim.notificationData(members["summary"]),
            let appData = FastClaim.notificationData(members["appData"]),
            let receiptType = FastClaim.string(members["receiptType"])
        else { return nil }
        self.signedDate = signedDate
        self.bundleId = bundleId
        self.environment = environment
        self.data = data
        self.summary = summary
        self.appData = appData
        self.receiptType = receiptType
    }

    struct DecodeProblem: Error, Sendable {
        var detail: String
    }
}

/// Typed reads of one fast-parsed claim: `.some(nil)` for absent or `null`, `.some(value)` for the right
/// plain type, `nil` when `JSONDecoder` must decide.
private enum FastClaim {
    static func string(_ value: FastJSONValue?) -> String?? {
        switch value {
        case nil, .null?: return .some(nil)
        case .string(let text)?: return .some(text)
        default: return nil
        }
    }

    /// Integers up to 2^53 convert to `Double` exactly, as `JSONDecoder` reads them.
    static func double(_ value: FastJSONValue?) -> Double?? {
        switch value {
        case nil, .null?: return .some(nil)
        case .integer(let number)? where number.magnitude <= 1 << 53: return .some(Double(number))
        default: return nil
        }
    }

    static func int64(_ value: FastJSONValue?) -> Int64?? {
        switch value {
        case nil, .null?: return .some(nil)
        case .integer(let number)?: return .some(number)
        default: return nil
        }
    }

    static func notificationData(_ value: FastJSONValue?) -> PayloadClaims.NotificationData?? {
        switch value {
        case nil, .null?: return .some(nil)
        case .object(let members)?:
            guard let bundleId = string(members["bundleId"]),
                let environment = string(members["environment"]),
                let appAppleId = int64(members["appAppleId"]),
                let signedTransactionInfo = string(members["signedTransactionInfo"]),
                let signedRenewalInfo = string(members["signedRenewalInfo"]),
                let signedAppTransactionInfo = string(members["signedAppTransactionInfo"])
            else { return nil }
            return .some(
                PayloadClaims.NotificationData(
                    bundleId: bundleId, environment: environment, appAppleId: appAppleId,
                    signedTransactionInfo: signedTransactionInfo, signedRenewalInfo: signedRenewalInfo,
                    signedAppTransactionInfo: signedAppTransactionInfo))
        default: return nil
        }
    }
}
