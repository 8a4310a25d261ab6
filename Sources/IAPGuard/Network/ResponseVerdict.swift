import Foundation

/// What a response means for the retry loop of ``ResilientHTTPClient``.
public enum ResponseVerdict: Sendable, Equatable {
    /// Usable (a success, or a definitive error the caller handles).
    case accept
    /// Transient: try again after the backoff, or after `after` seconds when the server said so.
    case retry(reason: String, after: TimeInterval?)
}
