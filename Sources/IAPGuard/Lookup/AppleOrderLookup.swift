/// The seam for Apple's **Look Up Order ID** (`GET /inApps/v1/lookup/{orderId}` of the App Store Server API):
/// the order id on the customer's Apple receipt e-mail (e.g. `MK5TTTVWJH`) → the transactions it contains.
///
/// The store has no Apple order id column, so a lookup by Apple order id needs this API. The network module
/// implements the protocol (it verifies the returned signed transactions before reporting their ids); the
/// lookup only needs the ids, which it then looks up in the store like any transaction id.
public protocol AppleOrderLookup: Sendable {
    /// Asks Apple which transactions belong to `appleOrderID`.
    func lookUpOrderID(_ appleOrderID: String) throws -> AppleOrderLookupResult
}

/// Apple's answer to Look Up Order ID, reduced to what a lookup needs.
public struct AppleOrderLookupResult: Sendable, Hashable {
    /// Apple's `status`: 0 valid order, 1 invalid (no such order).
    public var status: Int
    /// The `transactionId`s of the order's verified signed transactions (empty when `status` is 1).
    public var transactionIDs: [String]

    public init(status: Int, transactionIDs: [String]) {
        self.status = status
        self.transactionIDs = transactionIDs
    }

    /// Whether Apple knows the order.
    public var isValid: Bool { status == 0 }
}
