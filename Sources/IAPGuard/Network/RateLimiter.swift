import Foundation

/// Spaces requests at least `1 / requestsPerSecond` apart (a bounded request rate), across threads.
public final class RateLimiter: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var nextSlot: Date = .distantPast
    /// The minimum gap between two requests, seconds (0 = unlimited).
    public let interval: TimeInterval

    /// `requestsPerSecond` ≤ 0 means unlimited.
    public init(requestsPerSecond: Double) {
        interval = requestsPerSecond > 0 ? 1 / requestsPerSecond : 0
    }

    /// Reserves the next slot and returns how long the caller must wait for it, seconds.
    public func reserve(now: Date = Date()) -> TimeInterval {
        lock.lock()
        defer { lock.unlock() }
        let slot = max(now, nextSlot)
        nextSlot = slot.addingTimeInterval(interval)
        return slot.timeIntervalSince(now)
    }
}
