/// One entry of the backend's ledger: units of a product granted to an account.
public struct Credit: Sendable, Hashable, Codable {
    public var creditID: String
    public var transactionID: String?
    public var orderID: String?
    /// The account that received the goods.
    public var userID: String?
    public var productID: String?
    public var units: Int64?
    public var creditedAt: Int64?
    /// When the credit was clawed back or rolled back (`nil` while it stands).
    public var reversedAt: Int64?
    /// The `reversed_at` the export gave when it is earlier than ``creditedAt`` by more than
    /// ``reversalClockSkewMillis``: a reversal cannot precede the grant (a backend hiding a credit behind a
    /// back-dated reversal), so it is not taken as one — ``reversedAt`` stays `nil` and the credit stands — and
    /// the ingest warns about it. Never stored.
    public var reversalBeforeGrant: Int64?
    /// How much earlier than ``creditedAt`` a `reversed_at` may be and still be a reversal (at ``creditedAt``):
    /// the grant and its rollback stamped by two servers whose clocks differ by milliseconds or seconds.
    public static let reversalClockSkewMillis: Int64 = 5_000
    /// Why it was reversed (`refund`, `rollback`, `manual`, ...).
    public var reversalReason: String?
    /// Units of this credit the user had already spent (used up) when the backend exported it; `nil` when
    /// the backend does not track consumption.
    public var consumedUnits: Int64?
    /// When the backend observed ``consumedUnits`` (epoch ms).
    public var consumedAt: Int64?

    public init(creditID: String) { self.creditID = creditID }

    /// Whether this ledger entry takes units back (negative ``units``): an append-only ledger's clawback of
    /// an earlier credit of the same transaction (or order) and account, not a credit itself.
    public var isClawback: Bool { (units ?? 0) < 0 }
}
