import Foundation

/// Why an HTTP exchange produced no usable response. Every case is a transport-level problem: the
/// request may be retried; nothing from it is stored and no watermark moves.
public enum HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The request did not complete in time.
    case timeout(String)
    /// The connection failed or broke (refused, reset, DNS, TLS).
    case transport(String)
    /// The body was shorter than its `Content-Length` (or the connection broke mid-body).
    case truncated(expected: Int, received: Int)
    /// The URL cannot be used (not http/https, no host).
    case badURL(String)

    public var description: String {
        switch self {
        case .timeout(let what): return "timed out: \(what)"
        case .transport(let what): return "network error: \(what)"
        case .truncated(let expected, let received):
            return "truncated body: \(received) of \(expected) bytes"
        case .badURL(let url): return "unusable URL \(url)"
        }
    }
}
