import Foundation
import Logging

/// Wraps an ``HTTPClient`` with timeouts, a bounded request rate and retries with exponential backoff
/// and jitter. Transport errors (timeouts, resets, truncated bodies) are always retried; which responses
/// are retried is the caller's `classify` decision (5xx, 429 and Apple's retryable error codes for the App
/// Store Server API; see ``AppStoreServerAPIClient``).
public struct ResilientHTTPClient: Sendable {
    public let client: any HTTPClient
    public let policy: RetryPolicy
    /// Per-attempt timeout, seconds.
    public let timeout: TimeInterval
    public let limiter: RateLimiter
    public let logger: Logger
    /// Sleeps the calling thread (tests record the delays instead).
    public let sleep: @Sendable (TimeInterval) -> Void
    /// A random number in [0, 1] for the jitter.
    public let random: @Sendable () -> Double

    public init(
        client: any HTTPClient, policy: RetryPolicy = RetryPolicy(), timeout: TimeInterval = 30,
        requestsPerSecond: Double = 10, logger: Logger,
        sleep: @escaping @Sendable (TimeInterval) -> Void = { if $0 > 0 { Thread.sleep(forTimeInterval: $0) } },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0...1) }
    ) {
        self.client = client
        self.policy = policy
        self.timeout = timeout
        self.limiter = RateLimiter(requestsPerSecond: requestsPerSecond)
        self.logger = logger
        self.sleep = sleep
        self.random = random
    }

    /// The outcome of ``send(_:classify:)``.
    public struct Outcome: Sendable {
        public var response: HTTPResponse
        /// Attempts made, the successful one included.
        public var attempts: Int
    }

    /// Sends the request built by `makeRequest` (called again for every attempt, so each carries fresh
    /// auth) until `classify` accepts a response or the attempts run out (``NetworkCallError``).
    public func send(
        _ makeRequest: () throws -> HTTPRequest, classify: (HTTPResponse) -> ResponseVerdict
    ) throws -> Outcome {
        var attempt = 0
        var lastProblem = "no attempt made"
        var described = "request"
        while attempt < policy.maxAttempts {
            attempt += 1
            let request = try makeRequest()
            described = request.description
            sleep(limiter.reserve())
            var serverDelay: TimeInterval?
            do {
                let response = try client.send(request, timeout: timeout)
                switch classify(response) {
                case .accept:
                    return Outcome(response: response, attempts: attempt)
                case .retry(let reason, let after):
                    lastProblem = reason
                    serverDelay = after
                }
            } catch let error as HTTPClientError {
                if case .badURL = error {
                    throw NetworkCallError(request: described, attempts: attempt, lastProblem: "\(error)")
                }
                lastProblem = error.description
            }
            guard attempt < policy.maxAttempts else { break }
            let delay: TimeInterval
            if let serverDelay {
                guard serverDelay <= policy.maxRetryAfter else {
                    lastProblem +=
                        " (Retry-After \(Self.wholeSeconds(serverDelay)) s exceeds the \(Self.wholeSeconds(policy.maxRetryAfter)) s limit)"
                    break
                }
                delay = serverDelay
            } else {
                delay = policy.backoff(attempt: attempt, unit: random())
            }
            logger.warning(
                "retrying request",
                metadata: [
                    "request": "\(described)", "attempt": "\(attempt)", "problem": "\(lastProblem)",
                    "delay_s": "\(String(format: "%.3f", delay))",
                ])
            sleep(delay)
        }
        throw NetworkCallError(request: described, attempts: attempt, lastProblem: lastProblem)
    }

    /// The default verdict for plain HTTP downloads: 5xx and 429 are retried (honouring `Retry-After`),
    /// everything else is accepted for the caller to judge.
    public static func defaultVerdict(_ response: HTTPResponse) -> ResponseVerdict {
        if response.status == 429 || response.status == 503 {
            return .retry(reason: "HTTP \(response.status)", after: response.retryAfter())
        }
        if response.status >= 500 { return .retry(reason: "HTTP \(response.status)", after: nil) }
        return .accept
    }

    /// `seconds` as a whole number for a message; a server's `Retry-After` may be far beyond `Int`'s range.
    static func wholeSeconds(_ seconds: TimeInterval) -> String {
        seconds < 1e15 ? String(Int(seconds)) : String(format: "%.3g", seconds)
    }
}
