import Foundation

/// A definitive error answer of the App Store Server API (after any retries): the HTTP status and Apple's
/// `errorCode` / `errorMessage` when the body carried them.
public struct AppStoreAPIError: Error, Sendable, CustomStringConvertible {
    /// `METHOD /path`.
    public let request: String
    public let status: Int
    public let errorCode: Int?
    public let errorMessage: String?

    public init(request: String, status: Int, errorCode: Int?, errorMessage: String?) {
        self.request = request
        self.status = status
        self.errorCode = errorCode
        self.errorMessage = errorMessage
    }

    /// TransactionIdNotFoundError: the id is unknown in this environment (it may belong to the other one).
    public static let transactionIDNotFound = 4_040_010
    /// RateLimitExceededError.
    public static let rateLimitExceeded = 4_290_000
    /// AccountNotFoundRetryable, AppNotFoundRetryable, OriginalTransactionIdNotFoundRetryable,
    /// GeneralInternalRetryable: Apple says try again.
    public static let retryableCodes: Set<Int> = [4_040_002, 4_040_004, 4_040_006, 5_000_001]

    /// Whether Apple reported that the transaction id is not found in this environment.
    public var isTransactionNotFound: Bool { errorCode == Self.transactionIDNotFound }

    public var description: String {
        var text = "\(request): HTTP \(status)"
        if (300..<400).contains(status) {
            text += " (a redirect, not followed: Apple's API never redirects, and the request carries the API token)"
        }
        if status == 401 {
            // Apple answers 401 with no body; the cause is always on this side.
            text +=
                " (Apple refused the API token: check app_store_api key_id, issuer_id and bundle_id against"
                + " App Store Connect, that the key file is that key's .p8, and that this machine's clock is right)"
        }
        if let errorCode { text += " errorCode \(errorCode)" }
        if let errorMessage { text += " (\(errorMessage.prefix(200)))" }
        return text
    }

    /// Parses Apple's `{"errorCode": …, "errorMessage": …}` body, tolerating anything else.
    static func parse(_ response: HTTPResponse, request: String) -> AppStoreAPIError {
        var code: Int?
        var message: String?
        if let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any] {
            code = (object["errorCode"] as? NSNumber)?.intValue ?? (object["errorCode"] as? String).flatMap { Int($0) }
            message = object["errorMessage"] as? String
        }
        return AppStoreAPIError(request: request, status: response.status, errorCode: code, errorMessage: message)
    }
}
