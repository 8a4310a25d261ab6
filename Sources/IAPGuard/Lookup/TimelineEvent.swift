/// One event in a lookup's timeline: what happened, when (UTC, and in the storefront's local time when the
/// storefront is known), and where the fact came from.
public struct TimelineEvent: Sendable, Hashable, Codable {
    /// What kind of event.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case orderCreated = "order-created"
        case applePurchase = "apple-purchase"
        case received
        case credit
        case creditReversed = "credit-reversed"
        case refund
        case revoke
        case refundReversed = "refund-reversed"
        case refundDeclined = "refund-declined"
        case consumptionRequest = "consumption-request"
        /// A subscription Apple ended early because the user upgraded it.
        case upgraded
        case notification

        /// Tie-break order for events at the same millisecond (cause before effect).
        var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }
    }

    /// Epoch ms UTC.
    public var at: Int64
    /// `at` as RFC 3339 UTC (`2026-03-01T12:00:00.000Z`).
    public var utc: String
    /// `at` in the storefront's local time (`2026-03-01 15:00 +03:00 TUR`), when the storefront is known.
    public var local: String?
    public var kind: Kind
    /// One line for humans.
    public var description: String
    /// Where the fact came from: the view and the source record (`orders data/orders.csv:12`).
    public var source: String
    public var transactionID: String?
    public var orderID: String?
    public var userID: String?
}
