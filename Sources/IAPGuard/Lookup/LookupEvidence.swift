/// The rows behind a lookup's answer, as read from the store's documented views. Times are epoch ms UTC,
/// prices milliunits of their currency (the data contract's conventions).
public struct LookupEvidence: Sendable, Hashable, Codable {
    /// A row of the `transactions` view (Apple's canonical copy), with the catalog's product type.
    public struct Transaction: Sendable, Hashable, Codable {
        public var transactionID: String
        public var originalTransactionID: String?
        public var bundleID: String?
        public var productID: String?
        /// The catalog's type for the product (`Consumable`, ...), else Apple's `type`.
        public var productType: String?
        public var quantity: Int64?
        public var purchaseDate: Int64?
        public var expiresDate: Int64?
        public var environment: String?
        public var storefront: String?
        public var currency: String?
        public var price: Int64?
        public var appAccountToken: String?
        public var inAppOwnershipType: String?
        public var transactionReason: String?
        public var revocationDate: Int64?
        public var revocationReason: Int64?
        public var revocationType: String?
        public var revocationPercentage: Int64?
        public var verification: String
        public var sightingCount: Int64
        public var conflictCount: Int64
        /// Apple's `appTransactionId` (the Apple Account), when the signed copy carried one.
        public var appTransactionID: String? = nil
        /// The subscription offer: `offerType` (1 introductory, 2 promotional, 3 offer code, 4 win-back),
        /// its id or code name, payment mode (`FREE_TRIAL`, `PAY_AS_YOU_GO`, `PAY_UP_FRONT`, `ONE_TIME`) and
        /// ISO 8601 duration.
        public var offerType: Int64? = nil
        public var offerIdentifier: String? = nil
        public var offerDiscountType: String? = nil
        public var offerPeriod: String? = nil
        /// `BILLED_UPFRONT` or `MONTHLY`, and the commitment of a monthly plan (JSON text, as Apple signed it).
        public var billingPlanType: String? = nil
        public var commitmentInfo: String? = nil
        /// Apple's `advancedCommerceInfo` (JSON text: items with their refunds and revocations).
        public var advancedCommerceInfo: String? = nil
        /// Signed members outside Apple's documented schema (JSON object text).
        public var unknownFields: String? = nil

        /// Whether the revocation is a subscription upgrade (revocation type `UPGRADE`), not a refund: only an
        /// auto-renewable subscription (or a product of unknown type) is upgraded, as the `refunds` view holds;
        /// a legacy consumable's cancellation marked `is_upgraded` is a refund.
        public var isUpgradeRevocation: Bool {
            revocationType == AppleTransaction.upgradeRevocationType
                && productType.map { $0 == "Auto-Renewable Subscription" } ?? true
        }
    }

    /// A row of the `sightings` view: one copy of a transaction as received, verified or not.
    public struct Sighting: Sendable, Hashable, Codable {
        public var sightingID: String
        public var transactionID: String
        public var originalTransactionID: String?
        public var productID: String?
        public var bundleID: String?
        public var environment: String?
        public var sourceKind: String
        public var sourceName: String
        public var sourceRef: String
        public var receiptStatus: Int64?
        public var submittedByUserID: String?
        public var submittedOrderID: String?
        public var receivedAt: Int64?
        public var verification: String
        public var verificationReason: String?
        public var verificationDetail: String?
        public var anomalies: String?
        /// The app account token this copy carried (Apple's later copies may carry another one: the developer
        /// can set it with Set App Account Token).
        public var appAccountToken: String? = nil
    }

    /// A row of the `orders` view.
    public struct Order: Sendable, Hashable, Codable {
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
        public var status: String?
        public var transactionID: String?
        public var appAccountToken: String?
        public var applicationUsername: String?
        public var sourceRef: String
    }

    /// A row of the `credits` view.
    public struct Credit: Sendable, Hashable, Codable {
        public var creditID: String
        public var transactionID: String?
        public var orderID: String?
        public var userID: String?
        public var productID: String?
        public var units: Int64?
        public var creditedAt: Int64?
        public var reversedAt: Int64?
        public var reversalReason: String?
        public var sourceRef: String
        /// Units the backend saw spent, and when (only when the backend exports consumption).
        public var consumedUnits: Int64? = nil
        public var consumedAt: Int64? = nil

        /// Whether the credit stands at `now` (not reversed, or reversed only later).
        public func stands(at now: Int64) -> Bool { reversedAt.map { $0 > now } ?? true }
    }

    /// A row of the `notifications` view.
    public struct Notification: Sendable, Hashable, Codable {
        public var notificationUUID: String
        public var notificationType: String?
        public var subtype: String?
        public var signedDate: Int64?
        public var environment: String?
        public var transactionID: String?
        public var originalTransactionID: String?
        public var productID: String?
        public var revocationDate: Int64?
        public var revocationPercentage: Int64?
        public var consumptionRequestReason: String?
        public var verification: String
        public var verificationReason: String?
        public var sourceRef: String
        /// The end of the Billing Grace Period the renewal info reports (`grace_period_expires_date`).
        public var gracePeriodExpiresDate: Int64? = nil
    }

    /// A row of the `refunds` view (verified refund-related events only).
    public struct RefundEvent: Sendable, Hashable, Codable {
        public var eventID: String
        public var transactionID: String?
        public var eventType: String
        public var eventDate: Int64?
        public var revocationReason: Int64?
        public var revocationPercentage: Int64?
        public var origin: String
    }

    public var transactions: [Transaction] = []
    public var sightings: [Sighting] = []
    public var orders: [Order] = []
    public var credits: [Credit] = []
    public var notifications: [Notification] = []
    public var refunds: [RefundEvent] = []

    public init() {}
}
