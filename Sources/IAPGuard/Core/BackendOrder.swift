/// An order in the app's backend: what a user asked to buy. Prices are milliunits of `currency` as
/// displayed to the user; `storefront` and `userCountry` are ISO 3166-1 alpha-3.
public struct BackendOrder: Sendable, Hashable, Codable {
    public var orderID: String
    public var userID: String?
    public var bundleID: String?
    public var productID: String?
    public var quantity: Int64?
    public var price: Int64?
    public var currency: String?
    public var storefront: String?
    public var userCountry: String?
    public var createdAt: Int64?
    /// The backend's status (`created`, `paid`, `credited`, `failed`, `cancelled`, ...).
    public var status: String?
    /// The transaction id the client submitted for this order.
    public var transactionID: String?
    public var appAccountToken: String?
    public var applicationUsername: String?
    public var environment: String?

    public init(orderID: String) { self.orderID = orderID }
}
