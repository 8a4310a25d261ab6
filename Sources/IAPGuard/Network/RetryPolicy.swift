import Foundation

/// How often and how patiently a request is retried.
///
/// Backoff is exponential with jitter: attempt *n* (1-based) waits a random time in
/// `[d/2, d]` with `d = min(maxDelay, baseDelay · 2^(n-1))`. A `Retry-After` from the server replaces
/// the computed delay when it is at most ``maxRetryAfter``; a longer one ends the call (the next run
/// resumes from the watermark).
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts per request, the first included (1 = no retries).
    public var maxAttempts: Int
    /// The first backoff delay, seconds.
    public var baseDelay: TimeInterval
    /// The longest backoff delay, seconds.
    public var maxDelay: TimeInterval
    /// The longest `Retry-After` honoured by sleeping, seconds.
    public var maxRetryAfter: TimeInterval

    public init(
        maxAttempts: Int = 5, baseDelay: TimeInterval = 0.5, maxDelay: TimeInterval = 30,
        maxRetryAfter: TimeInterval = 120
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = max(0, baseDelay)
        self.maxDelay = max(0, maxDelay)
        self.maxRetryAfter = max(0, maxRetryAfter)
    }

    /// The backoff before retry number `attempt` (1 = the first retry); `unit` is a random number in [0, 1].
    public func backoff(attempt: Int, unit: Double) -> TimeInterval {
        let exponent = Double(max(0, attempt - 1))
        let ceiling = min(maxDelay, baseDelay * pow(2, min(exponent, 30)))
        let jitter = min(1, max(0, unit))
        return ceiling / 2 + ceiling / 2 * jitter
    }
}
