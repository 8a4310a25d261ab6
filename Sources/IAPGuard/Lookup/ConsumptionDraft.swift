/// A draft of the consumption information Apple asks for after a `CONSUMPTION_REQUEST` notification about a
/// consumable (App Store Server API, **Send Consumption Information**), derived from the backend's credits and
/// the customer's history. It is a **draft**: a person must review and approve it before anything is sent;
/// iapguard never sends it. It is only written when support confirmed the customer consented to sharing
/// consumption data (Apple rejects `customerConsented` other than `true`).
public struct ConsumptionDraft: Sendable, Hashable, Codable {
    /// Whether a draft could be written.
    public enum State: String, Sendable, Hashable, Codable {
        case draft
        case notDrafted = "not-drafted"
    }

    /// The body of `PUT /inApps/v2/transactions/consumption/{transactionId}` (Apple's current
    /// `ConsumptionRequest`). Keys are Apple's (camelCase).
    public struct AppleRequest: Sendable, Hashable, Codable {
        public var customerConsented: Bool
        /// Milli-percent (0–100000). Absent for auto-renewable subscriptions (Apple computes their
        /// consumption itself).
        public var consumptionPercentage: Int?
        /// One of ``deliveryStatuses``.
        public var deliveryStatus: String
        /// One of ``refundPreferences``, or absent for no preference.
        public var refundPreference: String?
        public var sampleContentProvided: Bool

        /// Apple's `deliveryStatus` values for this request body.
        public static let deliveryStatuses: Set<String> = [
            "DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM", "UNDELIVERED_SERVER_OUTAGE",
            "UNDELIVERED_OTHER",
        ]
        /// Apple's `refundPreference` values.
        public static let refundPreferences: Set<String> = ["DECLINE", "GRANT_FULL", "GRANT_PRORATED"]

        /// What Apple would reject in this body for a product of `productType` (Apple's `type`: `Consumable`,
        /// `Non-Consumable`, `Auto-Renewable Subscription`, `Non-Renewing Subscription`); empty when it is valid.
        public func violations(productType: String?) -> [String] {
            var problems: [String] = []
            if !customerConsented {
                problems.append("customerConsented must be true")
            }
            if !Self.deliveryStatuses.contains(deliveryStatus) {
                problems.append("deliveryStatus \(deliveryStatus) is not one of Apple's values")
            }
            if let refundPreference, !Self.refundPreferences.contains(refundPreference) {
                problems.append("refundPreference \(refundPreference) is not one of Apple's values")
            }
            if productType == "Auto-Renewable Subscription" {
                if consumptionPercentage != nil {
                    problems.append("consumptionPercentage must be omitted for an auto-renewable subscription")
                }
            } else if let pct = consumptionPercentage {
                if !(0...100_000).contains(pct) {
                    problems.append("consumptionPercentage \(pct) is outside 0...100000")
                }
                if deliveryStatus != "DELIVERED" && pct != 0 {
                    problems.append("consumptionPercentage must be 0 when deliveryStatus is not DELIVERED")
                }
            }
            if refundPreference == "GRANT_PRORATED", productType != "Auto-Renewable Subscription",
                (consumptionPercentage ?? 0) <= 0
            {
                problems.append("GRANT_PRORATED needs a consumptionPercentage above 0")
            }
            return problems
        }
    }

    /// The body of the older `PUT /inApps/v1/transactions/consumption/{transactionId}` (`ConsumptionRequestV1`),
    /// with Apple's integer codes. Keys are Apple's (camelCase).
    public struct AppleRequestV1: Sendable, Hashable, Codable {
        public var accountTenure: Int
        public var appAccountToken: String
        public var consumptionStatus: Int
        public var customerConsented: Bool
        public var deliveryStatus: Int
        public var lifetimeDollarsPurchased: Int
        public var lifetimeDollarsRefunded: Int
        public var platform: Int
        public var playTime: Int
        public var refundPreference: Int
        public var sampleContentProvided: Bool
        public var userStatus: Int
    }

    public var state: State
    public var transactionID: String
    public var notificationUUID: String
    /// When Apple asked (the notification's signed date), epoch ms.
    public var requestedAt: Int64?
    public var consumptionRequestReason: String?
    /// Why no draft was written (state `not-drafted`).
    public var reason: String?
    /// Always `true`: nothing may be sent without a person's approval.
    public var requiresApproval: Bool = true
    /// The endpoint the approved body is for.
    public var endpoint: String
    public var appleRequest: AppleRequest?
    public var appleRequestV1: AppleRequestV1?
    /// How each value was derived and what the approver must check.
    public var basis: [String] = []

    /// The Send Consumption Information endpoint for a transaction.
    static func endpoint(for transactionID: String) -> String {
        "PUT /inApps/v2/transactions/consumption/" + transactionID
    }

    /// Keys under which Apple's own camelCase keys are kept when the result is encoded (see ``LookupJSON``).
    static let appleKeyContainers: Set<String> = ["appleRequest", "appleRequestV1"]
}
