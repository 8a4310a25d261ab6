import Foundation

/// One HTTP request as the network stage sends it.
///
/// `headers` may carry an `Authorization` bearer token: ``description`` and every log line of the network
/// stage show only the method and the URL path, never header values or the body.
public struct HTTPRequest: Sendable, CustomStringConvertible {
    public var method: String
    public var url: URL
    public var headers: [String: String]
    public var body: Data?

    public init(method: String = "GET", url: URL, headers: [String: String] = [:], body: Data? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// `METHOD /path` (no query, no headers: safe to log).
    public var description: String { "\(method) \(url.path)" }
}
