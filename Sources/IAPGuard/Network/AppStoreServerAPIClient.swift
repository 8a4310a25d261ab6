import Foundation

/// The App Store Server API endpoints iapguard uses, for one app (the JWT's `bid`) in one environment.
///
/// Every request carries a fresh ES256 JWT (``AppStoreJWTSigner``) and goes through
/// ``ResilientHTTPClient``: 5xx, 429 / 4290000 (honouring `Retry-After`), Apple's retryable codes
/// (4040002, 4040004, 4040006, 5000001), timeouts, network errors, truncated bodies and 2xx bodies that
/// are not the documented JSON are retried; other errors throw ``AppStoreAPIError`` at once. Nothing here
/// verifies signatures: callers hand the signed payloads to the verify stage.
public struct AppStoreServerAPIClient: Sendable {
    public let environment: AppleEnvironment
    public let baseURL: URL
    public let signer: AppStoreJWTSigner
    public let http: ResilientHTTPClient

    public init(environment: AppleEnvironment, baseURL: URL, signer: AppStoreJWTSigner, http: ResilientHTTPClient) {
        self.environment = environment
        self.baseURL = baseURL
        self.signer = signer
        self.http = http
    }

    /// Get Transaction History v2: one page of the customer's transactions for the app, oldest first.
    /// Pass the previous page's `revision` for the next page (or for what changed since).
    public func transactionHistory(transactionID: String, revision: String?) throws -> SignedTransactionPage {
        var query: [(String, String)] = [("sort", "ASCENDING")]
        if let revision { query.append(("revision", revision)) }
        return try signedTransactionPage(path: "/inApps/v2/history/\(Self.segment(transactionID))", query: query)
    }

    /// Get Refund History v2: one page of the customer's refunded transactions for the app.
    public func refundHistory(transactionID: String, revision: String?) throws -> SignedTransactionPage {
        let query = revision.map { [("revision", $0)] } ?? []
        return try signedTransactionPage(path: "/inApps/v2/refund/lookup/\(Self.segment(transactionID))", query: query)
    }

    /// Get Notification History: one page (at most 20 entries) for `query`; repeat the same query with the
    /// returned `paginationToken` while `hasMore`.
    public func notificationHistory(_ query: NotificationHistoryQuery, paginationToken: String?) throws
        -> NotificationHistoryPage
    {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let body = try encoder.encode(query)
        let parameters = paginationToken.map { [("paginationToken", $0)] } ?? []
        return try call(
            method: "POST", path: "/inApps/v1/notifications/history", query: parameters, body: body,
            decode: Self.notificationPage)
    }

    /// Look Up Order ID: the signed transactions of the customer's order id (from the App Store receipt
    /// e-mail), for support.
    public func lookUpOrder(orderID: String) throws -> OrderLookupResult {
        try call(method: "GET", path: "/inApps/v1/lookup/\(Self.segment(orderID))", query: [], body: nil) { object in
            guard let status = (object["status"] as? NSNumber)?.intValue else {
                throw MalformedBody(message: "OrderLookupResponse without a numeric status")
            }
            return OrderLookupResult(status: status, signedTransactions: try Self.strings(object, "signedTransactions"))
        }
    }

    /// Get App Transaction Info: the customer's signed app transaction (`signedAppTransactionInfo`) for any of
    /// their transaction ids, `nil` when Apple's answer holds none. Apple's "not found" errors throw.
    public func appTransactionInfo(transactionID: String) throws -> String? {
        try call(
            method: "GET", path: "/inApps/v1/transactions/appTransactions/\(Self.segment(transactionID))", query: [],
            body: nil
        ) { object in
            guard let value = object["signedAppTransactionInfo"], !(value is NSNull) else { return nil }
            guard let signed = value as? String else {
                throw MalformedBody(message: "signedAppTransactionInfo is not a string")
            }
            return signed
        }
    }

    // MARK: - Plumbing

    func signedTransactionPage(path: String, query: [(String, String)]) throws -> SignedTransactionPage {
        try call(method: "GET", path: path, query: query, body: nil, decode: Self.transactionPage)
    }

    /// Sends one call with retries and decodes the accepted 2xx body; a body that is not a JSON object or
    /// fails `decode` is retried like a transport error.
    func call<T>(
        method: String, path: String, query: [(String, String)], body: Data?,
        decode: ([String: Any]) throws -> T
    ) throws -> T {
        let url = try url(path: path, query: query)
        var described = "\(method) \(url.path)"
        var parsed: T?
        let outcome = try http.send(
            {
                var headers = [
                    "Authorization": "Bearer \(try signer.token())", "Accept": "application/json",
                    "User-Agent": "iapguard/\(IAPGuardInfo.version)",
                ]
                if body != nil { headers["Content-Type"] = "application/json" }
                let request = HTTPRequest(method: method, url: url, headers: headers, body: body)
                described = request.description
                return request
            },
            classify: { response in
                let verdict = Self.verdict(response)
                guard verdict == .accept, (200..<300).contains(response.status) else { return verdict }
                guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any] else {
                    return .retry(reason: "HTTP \(response.status) with a body that is not a JSON object", after: nil)
                }
                do {
                    parsed = try decode(object)
                } catch {
                    return .retry(reason: "HTTP \(response.status) with a malformed body: \(error)", after: nil)
                }
                return .accept
            })
        guard (200..<300).contains(outcome.response.status), let parsed else {
            throw AppStoreAPIError.parse(outcome.response, request: described)
        }
        return parsed
    }

    /// Which responses are transient.
    static func verdict(_ response: HTTPResponse) -> ResponseVerdict {
        if (200..<300).contains(response.status) { return .accept }
        let error = AppStoreAPIError.parse(response, request: "")
        if response.status == 429 || error.errorCode == AppStoreAPIError.rateLimitExceeded {
            return .retry(reason: "rate limited (HTTP \(response.status))", after: response.retryAfter())
        }
        if let code = error.errorCode, AppStoreAPIError.retryableCodes.contains(code) {
            return .retry(reason: "HTTP \(response.status) retryable errorCode \(code)", after: response.retryAfter())
        }
        if response.status >= 500 {
            return .retry(
                reason: "HTTP \(response.status)" + (error.errorCode.map { " errorCode \($0)" } ?? ""),
                after: response.retryAfter())
        }
        return .accept
    }

    func url(path: String, query: [(String, String)]) throws -> URL {
        var text = baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        text += path
        if !query.isEmpty {
            text += "?" + query.map { "\(Self.segment($0.0))=\(Self.segment($0.1))" }.joined(separator: "&")
        }
        guard let url = URL(string: text) else { throw HTTPClientError.badURL(text) }
        return url
    }

    /// Percent-encodes everything but unreserved characters (ids and tokens are untrusted text).
    static func segment(_ text: String) -> String {
        var allowed = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""
    }

    static func strings(_ object: [String: Any], _ key: String) throws -> [String] {
        guard let value = object[key], !(value is NSNull) else { return [] }
        guard let list = value as? [Any] else { throw MalformedBody(message: "\(key) is not an array") }
        return try list.map {
            guard let s = $0 as? String else { throw MalformedBody(message: "\(key) holds a non-string entry") }
            return s
        }
    }

    /// A boolean Apple always sends: a page without `hasMore` cannot say whether more follow, and read as
    /// `false` it would end the pull early and move its cursor past what it never fetched.
    static func requiredBool(_ object: [String: Any], _ key: String) throws -> Bool {
        guard let value = object[key], !(value is NSNull) else { throw MalformedBody(message: "\(key) is missing") }
        guard let b = value as? Bool else { throw MalformedBody(message: "\(key) is not a boolean") }
        return b
    }

    static func transactionPage(_ object: [String: Any]) throws -> SignedTransactionPage {
        let page = SignedTransactionPage(
            signedTransactions: try strings(object, "signedTransactions"), revision: object["revision"] as? String,
            hasMore: try requiredBool(object, "hasMore"), bundleID: object["bundleId"] as? String,
            environment: object["environment"] as? String,
            appAppleID: (object["appAppleId"] as? NSNumber)?.int64Value)
        if page.hasMore, page.revision == nil {
            throw MalformedBody(message: "hasMore without a revision")
        }
        return page
    }

    static func notificationPage(_ object: [String: Any]) throws -> NotificationHistoryPage {
        var items: [NotificationHistoryPage.Item] = []
        if let raw = object["notificationHistory"], !(raw is NSNull) {
            guard let list = raw as? [Any] else { throw MalformedBody(message: "notificationHistory is not an array") }
            for entry in list {
                guard let map = entry as? [String: Any], let payload = map["signedPayload"] as? String else {
                    throw MalformedBody(message: "a notificationHistory entry without signedPayload")
                }
                let attempts = (map["sendAttempts"] as? [[String: Any]]) ?? []
                items.append(
                    .init(signedPayload: payload, lastSendAttemptResult: attempts.last?["sendAttemptResult"] as? String)
                )
            }
        }
        let page = NotificationHistoryPage(
            items: items, paginationToken: object["paginationToken"] as? String,
            hasMore: try requiredBool(object, "hasMore"))
        if page.hasMore, page.paginationToken == nil {
            throw MalformedBody(message: "hasMore without a paginationToken")
        }
        return page
    }
}
