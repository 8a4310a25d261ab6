/// An App Store Server Notification V2, decoded. The nested signed transaction becomes an
/// ``AppleSighting`` of its own.
public struct AppleNotification: Sendable, Hashable {
    public var notificationUUID: String
    public var notificationType: String?
    public var subtype: String?
    public var signedDate: Int64?
    public var environment: String?
    public var bundleID: String?
    public var appAppleID: Int64?
    public var transactionID: String?
    public var originalTransactionID: String?
    public var productID: String?
    public var revocationDate: Int64?
    public var revocationReason: Int64?
    public var revocationPercentage: Int64?
    public var autoRenewProductID: String?
    public var autoRenewStatus: Int64?
    public var consumptionRequestReason: String?
    /// The `appTransactionId` of the nested signed transaction or of `appData.signedAppTransactionInfo`.
    public var appTransactionID: String?
    /// Members of the signed payload (and of its `data`, `summary` or `appData`) outside Apple's documented
    /// schema, as a compact JSON object text (nested ones keyed `data.<name>`); `nil` when there are none.
    public var unknownFields: String?
    /// The decoded payload of `data.signedRenewalInfo` as signed (JSON text), every field kept.
    public var renewalInfo: String?
    /// `gracePeriodExpiresDate` of the renewal info (epoch ms): until when Apple keeps a subscriber whose
    /// renewal charge failed entitled under the Billing Grace Period; `nil` when Apple reported none.
    public var gracePeriodExpiresDate: Int64?
    public var verification: VerificationOutcome = .unverified
    public var sourceName: String = ""
    public var sourceRef: String = ""
    public var payloadHash: String = ""

    public init(notificationUUID: String) { self.notificationUUID = notificationUUID }
}
