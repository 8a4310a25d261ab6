import Foundation

/// A request that could not get a usable response within its retry budget.
public struct NetworkCallError: Error, Sendable, CustomStringConvertible {
    /// `METHOD /path` (safe to log).
    public let request: String
    public let attempts: Int
    /// The last problem seen (a status with Apple's error code, a timeout, a truncated body, …).
    public let lastProblem: String

    public init(request: String, attempts: Int, lastProblem: String) {
        self.request = request
        self.attempts = attempts
        self.lastProblem = lastProblem
    }

    public var description: String { "\(request): gave up after \(attempts) attempt(s): \(lastProblem)" }
}
