import Dispatch
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The production ``HTTPClient``: Foundation's `URLSession`, which on Linux (swift-corelibs-foundation's
/// FoundationNetworking) runs on libcurl — HTTP/1.1 and HTTP/2, TLS through the system's OpenSSL and CA
/// store, proxies from the usual environment variables. It needs no package beyond Foundation.
///
/// Each call blocks until the whole body arrived, the deadline passed or the transfer failed. A body
/// shorter than its `Content-Length` is ``HTTPClientError/truncated(expected:received:)``, never a
/// response. Cookies, caches and credential stores are off: every request carries its own auth.
///
/// Every call uses a session of its own, so a connection is never reused: libcurl re-sends a request by
/// itself when a reused connection turns out to have been closed by the server, and such a hidden retry
/// would be an HTTP request nobody counted. This way each request on the wire is exactly one attempt of
/// ``ResilientHTTPClient``, which makes every retry itself (and counts it). The cost is a new connection
/// (and TLS handshake) per request, small at the job's request rate.
public final class URLSessionHTTPClient: HTTPClient, @unchecked Sendable {
    // Immutable after init; each call makes its own `URLSession` from it.
    private let configuration: URLSessionConfiguration

    /// Creates a client; `maxConnectionsPerHost` caps parallel connections per call's session.
    public init(maxConnectionsPerHost: Int = 2) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        configuration.urlCredentialStorage = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = maxConnectionsPerHost
        self.configuration = configuration
    }

    public func send(_ request: HTTPRequest, timeout: TimeInterval) throws -> HTTPResponse {
        guard let scheme = request.url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            request.url.host != nil
        else {
            throw HTTPClientError.badURL(request.url.absoluteString)
        }
        var urlRequest = URLRequest(
            url: request.url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: timeout)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        urlRequest.httpBody = request.body

        let session = URLSession(configuration: configuration)
        defer { session.finishTasksAndInvalidate() }
        let box = ResultBox()
        let done = DispatchSemaphore(value: 0)
        let task = session.dataTask(with: urlRequest) { data, response, error in
            box.set(data: data, response: response, error: error)
            done.signal()
        }
        task.resume()
        // URLSession's timeout is an idle timeout; this is the overall deadline (a trickling body ends too).
        if done.wait(timeout: .now() + timeout + 0.5) == .timedOut {
            task.cancel()
            _ = done.wait(timeout: .now() + 5)
            throw HTTPClientError.timeout("\(request) after \(timeout) s")
        }
        let (data, response, error) = box.get()
        if let error {
            throw Self.map(error, request: request, timeout: timeout)
        }
        guard let http = response as? HTTPURLResponse else {
            throw HTTPClientError.transport("\(request): no HTTP response")
        }
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields {
            if let name = key as? String, let text = value as? String { headers[name.lowercased()] = text }
        }
        let body = data ?? Data()
        if headers["content-encoding"] == nil, let declared = headers["content-length"].flatMap({ Int($0) }),
            declared != body.count
        {
            throw HTTPClientError.truncated(expected: declared, received: body.count)
        }
        return HTTPResponse(status: http.statusCode, headers: headers, body: body)
    }

    static func map(_ error: Error, request: HTTPRequest, timeout: TimeInterval) -> HTTPClientError {
        if let urlError = error as? URLError {
            switch urlError.code {
            case .timedOut: return .timeout("\(request) after \(timeout) s")
            case .unsupportedURL, .badURL: return .badURL(request.url.absoluteString)
            default: return .transport("\(request): \(urlError.code.rawValue) \(urlError.localizedDescription)")
            }
        }
        return .transport("\(request): \(error.localizedDescription)")
    }

    /// Carries the completion handler's values back to the waiting thread.
    private final class ResultBox: @unchecked Sendable {
        private let lock = NSLock()
        private var data: Data?
        private var response: URLResponse?
        private var error: Error?

        func set(data: Data?, response: URLResponse?, error: Error?) {
            lock.lock()
            defer { lock.unlock() }
            self.data = data
            self.response = response
            self.error = error
        }

        func get() -> (Data?, URLResponse?, Error?) {
            lock.lock()
            defer { lock.unlock() }
            return (data, response, error)
        }
    }
}
