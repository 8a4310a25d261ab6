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
///
/// Redirects are not followed unless `followRedirects` is set: a 3xx is returned as the response (with an
/// empty body). Foundation would otherwise re-send the request, `Authorization` header included, to whatever
/// host the `Location` names; Apple's API never redirects, so a redirect there means a proxy or a
/// misconfiguration, and the bearer token must not follow it.
public final class URLSessionHTTPClient: HTTPClient, @unchecked Sendable {
    // Immutable after init; each call makes its own `URLSession` from it.
    private let configuration: URLSessionConfiguration
    private let followRedirects: Bool

    /// Creates a client; `maxConnectionsPerHost` caps parallel connections per call's session;
    /// `followRedirects` lets a download without credentials (FX rates) follow a 3xx.
    public init(maxConnectionsPerHost: Int = 2, followRedirects: Bool = false) {
        self.followRedirects = followRedirects
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

        // A task delegate rather than a completion handler: only a delegate is asked before a redirect is followed.
        let box = ResultBox(followRedirects: followRedirects)
        let session = URLSession(configuration: configuration, delegate: box, delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        let task = session.dataTask(with: urlRequest)
        task.resume()
        // URLSession's timeout is an idle timeout; this is the overall deadline (a trickling body ends too).
        if box.done.wait(timeout: .now() + timeout + 0.5) == .timedOut {
            task.cancel()
            _ = box.done.wait(timeout: .now() + 5)
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
        // A redirect not followed: its body was never read (Foundation discards it).
        if (300..<400).contains(http.statusCode) {
            return HTTPResponse(status: http.statusCode, headers: headers, body: Data())
        }
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
            case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
                .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected:
                return .transport("\(request): TLS failed (\(urlError.code.rawValue) \(urlError.localizedDescription))")
            case .unknown:
                // FoundationNetworking reports a failed TLS handshake as code -1, its text starting with the
                // TLS library's version (and OpenSSL's reason, when it gave one).
                return .transport(
                    "\(request): the connection failed (\(urlError.localizedDescription)); this is how a failed TLS"
                        + " handshake is reported: an untrusted, expired or mismatched certificate, or a server not"
                        + " speaking TLS")
            default: return .transport("\(request): \(urlError.code.rawValue) \(urlError.localizedDescription)")
            }
        }
        return .transport("\(request): \(error.localizedDescription)")
    }

    /// The task's delegate: collects the body, refuses redirects (unless following them), and carries the
    /// outcome back to the waiting thread (`done` is signalled once the task completed).
    private final class ResultBox: NSObject, URLSessionDataDelegate, @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        private let followRedirects: Bool
        private let lock = NSLock()
        private var data = Data()
        private var response: URLResponse?
        private var error: Error?

        init(followRedirects: Bool) {
            self.followRedirects = followRedirects
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            lock.lock()
            defer { lock.unlock() }
            self.data.append(data)
        }

        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
        ) {
            // nil: the redirect itself is the response.
            completionHandler(followRedirects ? request : nil)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
            lock.lock()
            self.response = task.response
            self.error = error
            lock.unlock()
            done.signal()
        }

        func get() -> (Data?, URLResponse?, Error?) {
            lock.lock()
            defer { lock.unlock() }
            return (data, response, error)
        }
    }
}
