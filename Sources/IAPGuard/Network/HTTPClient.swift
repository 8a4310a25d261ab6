import Foundation

/// Sends one HTTP request and waits for the whole response.
///
/// The job is a synchronous batch pipeline, so the client blocks the calling thread. A non-2xx status is
/// a response, not an error; transport problems (timeouts, resets, truncated bodies) throw
/// ``HTTPClientError``. ``URLSessionHTTPClient`` is the production implementation; tests substitute
/// their own.
public protocol HTTPClient: Sendable {
    /// Sends `request`, giving up after `timeout` seconds.
    func send(_ request: HTTPRequest, timeout: TimeInterval) throws -> HTTPResponse
}
