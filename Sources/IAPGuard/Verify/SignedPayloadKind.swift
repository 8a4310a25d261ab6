import Foundation

/// The kind of Apple-signed payload a compact JWS carries; it decides which claims are checked.
public enum SignedPayloadKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// A signed transaction (`JWSTransaction`): `bundleId` and `environment` are checked.
    case transaction
    /// Signed renewal info (`JWSRenewalInfo`): it names no bundle, so only `environment` is checked.
    case renewalInfo = "renewal-info"
    /// An App Store Server Notification V2 (`signedPayload`): claims are read from `data` (or `summary`).
    case notification
    /// A signed app transaction (`JWSAppTransaction`, `appData.signedAppTransactionInfo`): `bundleId` and
    /// its environment, `receiptType`, are checked.
    case appTransaction = "app-transaction"

    /// Guesses the kind from the payload's keys: `notificationType` means a notification, `appTransactionId`
    /// without `transactionId` an app transaction, `transactionId` or `bundleId` a transaction, anything else
    /// renewal info. Used where the input does not say.
    public init(inferringFrom jws: CompactJWS) {
        let object = (try? JSONSerialization.jsonObject(with: jws.payloadJSON)) as? [String: Any] ?? [:]
        if object["notificationType"] != nil {
            self = .notification
        } else if object["appTransactionId"] != nil && object["transactionId"] == nil {
            self = .appTransaction
        } else if object["transactionId"] != nil || object["bundleId"] != nil {
            self = .transaction
        } else {
            self = .renewalInfo
        }
    }
}
