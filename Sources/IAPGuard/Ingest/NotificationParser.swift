import Foundation

/// Turns App Store Server Notifications V2 (`{"signedPayload": "…"}` per line) into a notification
/// record plus a sighting of the nested signed transaction, each verified on its own. App-level
/// notifications (`RESCIND_CONSENT`, …) carry `appData` instead of `data`: its bundle and environment are
/// read the same way, and its `signedAppTransactionInfo` gives the notification's `appTransactionId`.
public struct NotificationParser: Sendable {
    public let sourceName: String
    public let verifier: any AppleRecordVerifier

    public init(sourceName: String, verifier: any AppleRecordVerifier) {
        self.sourceName = sourceName
        self.verifier = verifier
    }

    /// Notification types that are always about one transaction and carry it in
    /// `data.signedTransactionInfo`.
    static let transactionTypes: Set<String> = [
        "REFUND", "REVOKE", "REFUND_REVERSED", "REFUND_DECLINED", "CONSUMPTION_REQUEST", "ONE_TIME_CHARGE",
        "SUBSCRIBED", "DID_RENEW", "DID_CHANGE_RENEWAL_PREF", "DID_CHANGE_RENEWAL_STATUS", "DID_FAIL_TO_RENEW",
        "EXPIRED", "GRACE_PERIOD_EXPIRED", "OFFER_REDEEMED", "PRICE_INCREASE", "RENEWAL_EXTENDED",
    ]

    /// Parses one line.
    public func parse(_ object: JSONObject, payloadHash: String, location: String) throws -> (
        AppleNotification, AppleSighting?
    ) {
        guard let signedPayload = try object.strictString("signedPayload") else {
            throw RecordError("no signedPayload in the object")
        }
        let receivedAt = try object.time("received_at")
        let jws: CompactJWS
        do {
            jws = try CompactJWS(signedPayload)
        } catch let error as CompactJWS.FormatError {
            throw RecordError("bad-format: \(error.message)")
        }
        let payload = jws.payloadObject
        let outcomes = verifier.verifyNotification(jws)
        var n = AppleNotification(notificationUUID: try payload.requiredString("notificationUUID"))
        n.notificationType = try payload.string("notificationType")
        n.subtype = try payload.string("subtype")
        n.signedDate = try payload.int64("signedDate")
        n.verification = outcomes.outcome
        n.sourceName = sourceName
        n.sourceRef = location
        n.payloadHash = payloadHash
        let appData = try payload.object("appData")
        let data = try payload.object("data") ?? payload.object("summary") ?? appData
        n.environment = try data?.string("environment").map { AppleEnvironment(appleValue: $0)?.rawValue ?? $0 }
        n.bundleID = try data?.string("bundleId")
        n.appAppleID = try data?.int64("appAppleId")
        n.consumptionRequestReason = try data?.string("consumptionRequestReason")
        n.unknownFields = try Self.unknownFields(of: payload)

        var sighting: AppleSighting?
        if let signedTransaction = try data?.string("signedTransactionInfo") {
            let nested: CompactJWS
            do {
                nested = try CompactJWS(signedTransaction)
            } catch let error as CompactJWS.FormatError {
                throw RecordError("data.signedTransactionInfo: bad-format: \(error.message)")
            }
            let transaction = try SignedTransactionParser.transaction(from: nested.payloadObject)
            n.transactionID = transaction.transactionID
            n.originalTransactionID = transaction.originalTransactionID
            n.productID = transaction.productID
            n.revocationDate = transaction.revocationDate
            n.revocationReason = transaction.revocationReason
            n.revocationPercentage = transaction.revocationPercentage
            n.appTransactionID = transaction.appTransactionID
            var s = AppleSighting(
                transaction: transaction, sourceKind: .notification, sourceName: sourceName, sourceRef: location,
                payloadHash: payloadHash, verification: outcomes.transaction ?? .unverified)
            s.receiptKey = Hashing.sha256Hex(nested.compact)
            s.receivedAt = receivedAt
            sighting = s
        }
        // No `data` at all fails the claims check (no bundle to check) after the signature passed: the same
        // signed-but-incomplete notification as one whose `data` lacks the transaction.
        let signedWithoutData =
            n.verification.status == .failed && n.verification.reason == VerificationFailure.badFormat.rawValue
            && n.verification.detail == JWSVerifier.noNotificationData
        if sighting == nil, n.verification.status == .verified || signedWithoutData, let type = n.notificationType,
            Self.transactionTypes.contains(type)
        {
            // Signed by Apple but without the transaction it is about: not a fact rules can act on.
            n.verification = .failed(
                .incomplete, "a \(type) notification without data.signedTransactionInfo (kept out of refunds)")
        }
        if let signedRenewal = try data?.string("signedRenewalInfo") {
            if let renewal = try? CompactJWS(signedRenewal) {
                let info = renewal.payloadObject
                // Kept whole: the renewal's offer, price and whatever Apple adds are never dropped.
                n.renewalInfo = String(validating: renewal.payloadJSON, as: UTF8.self)
                n.autoRenewProductID = try info.string("autoRenewProductId")
                n.autoRenewStatus = try info.int64("autoRenewStatus")
                n.gracePeriodExpiresDate = try Self.gracePeriodExpiresDate(of: info)
                if n.originalTransactionID == nil { n.originalTransactionID = try info.string("originalTransactionId") }
            } else {
                throw RecordError("data.signedRenewalInfo: bad-format: not a decodable compact JWS")
            }
        }
        if let signedApp = try appData?.string("signedAppTransactionInfo") {
            let nested: CompactJWS
            do {
                nested = try CompactJWS(signedApp)
            } catch let error as CompactJWS.FormatError {
                throw RecordError("appData.signedAppTransactionInfo: bad-format: \(error.message)")
            }
            if let id = try nested.payloadObject.string("appTransactionId") { n.appTransactionID = id }
        }
        return (n, sighting)
    }

    /// The end of the Billing Grace Period a decoded renewal info (`JWSRenewalInfoDecodedPayload`) reports:
    /// its `gracePeriodExpiresDate` in epoch ms, `nil` when absent. Read as `autoRenewStatus` is (a numeric
    /// string is accepted); anything else is an error naming the field. The schema migration that added the
    /// column reads stored renewal info with it too.
    static func gracePeriodExpiresDate(of renewalInfo: JSONObject) throws -> Int64? {
        try renewalInfo.int64("gracePeriodExpiresDate")
    }
}
