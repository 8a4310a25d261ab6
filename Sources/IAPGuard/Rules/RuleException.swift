import Foundation

/// A known-good case a rule must not count as a hit (a QA account, a known migration): data, not code.
///
/// A hit whose columns equal every value in ``match`` is recorded as `suppressed` (kept for audit) until
/// ``expires`` has passed; after that the exception no longer suppresses and `rules validate` warns.
public struct RuleException: Sendable, Hashable {
    /// Result-column name → value (compared as text).
    public var match: [String: String]
    public var owner: String
    public var reason: String
    /// `YYYY-MM-DD`; the exception applies through the end of that day (UTC).
    public var expires: String
    public var line: Int

    public init(match: [String: String], owner: String, reason: String, expires: String, line: Int = 0) {
        self.match = match
        self.owner = owner
        self.reason = reason
        self.expires = expires
        self.line = line
    }

    /// The first epoch millisecond after the expiry day, or `nil` if `expires` is not a valid date.
    public var expiresAfterMillis: Int64? {
        guard let start = EpochTime.parseDay(expires) else { return nil }
        return start + 86_400_000
    }

    /// Whether the exception has expired at `now` (epoch ms). An unparseable date counts as expired.
    public func isExpired(at now: Int64) -> Bool {
        guard let end = expiresAfterMillis else { return true }
        return now >= end
    }

    /// Whether a hit row matches every field of this exception.
    public func matches(_ row: [String: SQLValue]) -> Bool {
        guard !match.isEmpty else { return false }
        for (column, value) in match {
            guard let actual = row[column]?.textValue, actual == value else { return false }
        }
        return true
    }
}
