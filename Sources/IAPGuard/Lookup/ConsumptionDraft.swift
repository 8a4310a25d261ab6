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
        /// Milli-percent (0–100000).
        public var consumptionPercentage: Int?
        /// `DELIVERED`, `UNDELIVERED_QUALITY_ISSUE`, `UNDELIVERED_WRONG_ITEM`, `UNDELIVERED_SERVER_OUTAGE`,
        /// `UNDELIVERED_OTHER`.
        public var deliveryStatus: String
        /// `DECLINE`, `GRANT_FULL`, `GRANT_PRORATED`, or absent for no preference.
        public var refundPreference: String?
        public var sampleContentProvided: Bool
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
