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
    /// Apple's `REFUND_FULL`, `REFUND_PRORATED`, `FAMILY_REVOKE`; or ``upgradeRevocationType`` when the
    /// revocation date is the day the user upgraded the subscription (no refund).
    public var revocationType: String?
    public var revocationPercentage: Int64?
    /// When Apple signed it (JWS) or the receipt's request date (legacy).
    public var signedDate: Int64?
    /// Apple's `appTransactionId`: one per Apple Account per app (family members each have their own),
    /// stable across redownloads, refunds and storefront changes. Not part of ``AppleSighting/sightingID``,
    /// so sightings stored before it was read keep their ids.
    public var appTransactionID: String?
    /// The subscription offer applied: `offerType` 1 introductory, 2 promotional, 3 offer code, 4 win-back
    /// (a value Apple adds later is kept as it came).
    public var offerType: Int64?
    /// The promotional or win-back offer id, or the offer code's reference name.
    public var offerIdentifier: String?
    /// The offer's payment mode: `FREE_TRIAL`, `PAY_AS_YOU_GO`, `PAY_UP_FRONT` or `ONE_TIME`.
    public var offerDiscountType: String?
    /// The offer's duration, ISO 8601 (`P1M`, `P1Y`, …).
    public var offerPeriod: String?
    /// `BILLED_UPFRONT` or `MONTHLY` (a monthly plan with a 12-month commitment when ``commitmentInfo`` is set).
    public var billingPlanType: String?
    /// Apple's `commitmentInfo` (`TransactionCommitmentInfo`) as compact JSON text, its members checked.
    public var commitmentInfo: String?
    /// Apple's `advancedCommerceInfo` (items, their refunds and revocations) as compact JSON text, its
    /// members checked.
    public var advancedCommerceInfo: String?
    /// The payload's members iapguard does not model (fields Apple adds later), as a compact JSON object text;
    /// `nil` when there are none. Kept so nothing Apple signed is dropped.
    public var unknownFields: String?

    public init(transactionID: String) {
        self.transactionID = transactionID
    }
}

extension AppleTransaction {
    /// The `revocationType` iapguard gives a subscription Apple ended early because the user upgraded it:
    /// legacy `is_upgraded` with a `cancellation_date`, or JWS `isUpgraded` with a `revocationDate` but no
    /// refund reason or type. The `refunds` view reports it as an `UPGRADE` event, never a refund.
    public static let upgradeRevocationType = "UPGRADE"

    /// A transaction id as Apple writes it: `id` without the leading zeros of an all-digit text (one `0` stays
    /// of an all-zero one); any other text as it is. Apple's ids are decimal integers written without padding,
    /// so `00002016000000000002` (a fixed-width CHAR column's export, or a customer reading it off such a
    /// screen) is transaction `2016000000000002`.
    public static func unpaddedID(_ id: String) -> String {
        let digits = id.utf8
        guard digits.count > 1, digits.first == UInt8(ascii: "0"),
            digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return id }
        let kept = id.drop(while: { $0 == "0" })
        return kept.isEmpty ? "0" : String(kept)
    }
}
