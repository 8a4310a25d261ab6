/// One Apple transaction as Apple describes it, normalised from any of Apple's formats
/// (legacy `verifyReceipt` entries, JWS `JWSTransactionDecodedPayload`, API responses).
///
/// Times are epoch milliseconds UTC; `price` is milliunits of `currency`; `storefront` is ISO 3166-1
/// alpha-3; `revocationPercentage` is Apple's milli-percent (50000 = 50 %).
public struct AppleTransaction: Sendable, Hashable, Codable {
    public var transactionID: String
    public var originalTransactionID: String?
    public var webOrderLineItemID: String?
    public var bundleID: String?
    public var productID: String?
    /// `Consumable`, `Non-Consumable`, `Auto-Renewable Subscription`, `Non-Renewing Subscription`.
    public var type: String?
    public var quantity: Int64?
    public var purchaseDate: Int64?
    public var originalPurchaseDate: Int64?
    public var expiresDate: Int64?
    public var environment: String?
    public var storefront: String?
    public var currency: String?
    public var price: Int64?
    public var appAccountToken: String?
    /// `PURCHASED` or `FAMILY_SHARED`.
    public var inAppOwnershipType: String?
    /// `PURCHASE` or `RENEWAL`.
    public var transactionReason: String?
    public var revocationDate: Int64?
    public var revocationReason: Int64?
    /// `REFUND_FULL`, `REFUND_PRORATED`, `FAMILY_REVOKE`.
    public var revocationType: String?
    public var revocationPercentage: Int64?
    /// When Apple signed it (JWS) or the receipt's request date (legacy).
    public var signedDate: Int64?
    /// Apple's `appTransactionId`: one per Apple Account per app (family members each have their own),
    /// stable across redownloads, refunds and storefront changes. Not part of ``AppleSighting/sightingID``,
    /// so sightings stored before it was read keep their ids.
    public var appTransactionID: String?

    public init(transactionID: String) {
        self.transactionID = transactionID
    }
}
