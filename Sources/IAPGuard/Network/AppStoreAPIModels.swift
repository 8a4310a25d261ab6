import Foundation

/// A page of signed transactions: Get Transaction History v2 (`HistoryResponse`) and Get Refund History v2
/// (`RefundHistoryResponse`) share this shape.
public struct SignedTransactionPage: Sendable, Hashable {
    /// Compact JWS signed transactions, as Apple sent them.
    public var signedTransactions: [String]
    /// The token for the next page (and, once `hasMore` is false, for changes after this one).
    public var revision: String?
    public var hasMore: Bool
    public var bundleID: String?
    public var environment: String?
    public var appAppleID: Int64?
}

/// The request body of Get Notification History (`NotificationHistoryRequest`). Times are epoch ms.
public struct NotificationHistoryQuery: Sendable, Hashable, Codable {
    public var startDate: Int64
    public var endDate: Int64
    public var notificationType: String?
    public var notificationSubtype: String?
    public var transactionId: String?
    public var onlyFailures: Bool?

    public init(
        startDate: Int64, endDate: Int64, notificationType: String? = nil, notificationSubtype: String? = nil,
        transactionId: String? = nil, onlyFailures: Bool? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.transactionId = transactionId
        self.onlyFailures = onlyFailures
    }
}

/// A page of Get Notification History (`NotificationHistoryResponse`).
public struct NotificationHistoryPage: Sendable, Hashable {
    /// One `notificationHistoryResponseItem`.
    public struct Item: Sendable, Hashable {
        /// The notification's compact JWS.
        public var signedPayload: String
        /// The last `sendAttemptResult` (`SUCCESS`, `NO_RESPONSE`, …), if Apple listed attempts.
        public var lastSendAttemptResult: String?
    }

    public var items: [Item]
    public var paginationToken: String?
    public var hasMore: Bool
}

/// The answer of Look Up Order ID (`OrderLookupResponse`): status 0 valid, 1 invalid.
public struct OrderLookupResult: Sendable, Hashable {
    public var status: Int
    public var signedTransactions: [String]
    public var isValid: Bool { status == 0 }
}

/// A 2xx body that does not have the documented shape: treated like a transport error (retried, never
/// stored, no watermark moves).
struct MalformedBody: Error, Sendable, CustomStringConvertible {
    let message: String
    var description: String { message }
}
