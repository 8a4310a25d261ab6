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
    /// Why it was reversed (`refund`, `rollback`, `manual`, ...).
    public var reversalReason: String?

    public init(creditID: String) { self.creditID = creditID }
}
