import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Pings a healthcheck URL (healthchecks.io conventions): `<url>/start` when the run starts, `<url>` when
/// it completes (exit 0 or 2), `<url>/fail` otherwise. Each ping is a POST whose body is the one-line
/// summary, with a short timeout. A failed ping is reported to the caller and never fails the run.
public struct HealthcheckPinger: Sendable {
    /// What happened.
    public enum Event: Sendable, Equatable {
        case start
        case success
        case failure
    }

    public let url: URL
    public let timeout: TimeInterval

    public init(url: URL, timeout: TimeInterval = 10) {
        self.url = url
        self.timeout = timeout
    }

    /// The URL pinged for `event`.
    public func target(_ event: Event) -> URL {
        switch event {
        case .start: return url.appendingPathComponent("start")
        case .success: return url
        case .failure: return url.appendingPathComponent("fail")
        }
    }

    /// The ping's address for logs: scheme, host and port only. The path (a ping UUID or key) works as a
    /// password and is never logged.
    public func loggableTarget(_ event: Event) -> String {
        var parts = URLComponents()
        parts.scheme = url.scheme
        parts.host = url.host
        parts.port = url.port
        let suffix: String
        switch event {
        case .start: suffix = "/start"
        case .success: suffix = ""
        case .failure: suffix = "/fail"
        }
        return (parts.string ?? "(the healthcheck URL)") + "/…" + suffix
    }

    /// Sends one ping and waits at most `timeout` seconds. Returns nil on a 2xx answer, else the problem.
    public func ping(_ event: Event, body: String = "") -> String? {
        var request = URLRequest(url: target(event), timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        request.setValue("text/plain; charset=utf-8", forHTTPHeaderField: "Content-Type")
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.timeoutIntervalForResource = timeout
        let session = URLSession(configuration: configuration)
        let task = session.dataTask(with: request) { _, response, error in
            if let error {
                outcome.set("\(error.localizedDescription)")
            } else if let http = response as? HTTPURLResponse, !(200..<300).contains(http.statusCode) {
                outcome.set("HTTP \(http.statusCode)")
            }
            done.signal()
        }
        task.resume()
        if done.wait(timeout: .now() + timeout + 1) == .timedOut {
            task.cancel()
            outcome.set("no answer within \(Int(timeout)) s")
        }
        session.finishTasksAndInvalidate()
        return outcome.get()
    }

    private final class Outcome: @unchecked Sendable {
        private let lock = NSLock()
        private var problem: String?
        func set(_ text: String) { lock.withLock { if problem == nil { problem = text } } }
        func get() -> String? { lock.withLock { problem } }
    }
}
