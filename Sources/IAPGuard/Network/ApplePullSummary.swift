import Foundation

/// What one run's pull from one App Store Server API source did, and what it left for the next run.
public struct ApplePullSummary: Sendable, Codable, Hashable {
    public var source: String
    /// Store writes of everything pulled.
    public var counts = WriteCounts()
    /// Logical API calls made (each may have been retried) and HTTP attempts sent (every request put on
    /// the wire, retries included: ``ResilientHTTPClient`` makes every retry itself).
    public var calls = 0
    public var attempts = 0
    public var notificationPages = 0
    public var notifications = 0
    public var historyPages = 0
    public var historyTransactions = 0
    public var refundPages = 0
    public var refundTransactions = 0
    /// Apple customers whose refund history was polled.
    public var refundCustomers = 0
    /// Transactions whose `appTransactionId` Get App Transaction Info supplied (verified, then stored).
    public var appTransactions = 0
    /// Credited transaction ids Apple did not know in any environment the app allows.
    public var transactionsNotFound: [String] = []
    /// Work left for the next run (the call budget ran out, a stop was requested, or a call failed).
    public var left: [String] = []
    /// Calls that failed after their retries; their keys keep the old watermark.
    public var errors: [String] = []

    public init(source: String) { self.source = source }

    /// One line for logs and the run summary.
    public var text: String {
        var parts = [
            "\(calls) call(s) (\(attempts) attempt(s))",
            "\(notifications) notification(s) in \(notificationPages) page(s)",
            "\(historyTransactions) history transaction(s) in \(historyPages) page(s)",
            "\(refundTransactions) refund(s) in \(refundPages) page(s) for \(refundCustomers) customer(s)",
        ]
        if appTransactions > 0 { parts.append("\(appTransactions) Apple Account(s) from app transactions") }
        if !transactionsNotFound.isEmpty { parts.append("\(transactionsNotFound.count) transaction(s) not found") }
        if !left.isEmpty { parts.append("left for the next run: " + left.joined(separator: "; ")) }
        if !errors.isEmpty { parts.append("\(errors.count) failed call(s)") }
        return "\(source): " + parts.joined(separator: ", ")
    }
}
