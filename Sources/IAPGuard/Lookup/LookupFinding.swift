/// A finding (row of the `findings` view) that mentions one of the looked-up entities.
public struct LookupFinding: Sendable, Hashable, Codable {
    public var findingID: String
    public var ruleID: String
    public var ruleTitle: String
    public var level: String
    public var status: String
    public var outcome: String
    public var summary: String
    public var transactionID: String?
    public var orderID: String?
    public var userID: String?
    /// Money at risk in the reference currency, milliunits.
    public var amountRef: Int64?
    public var firstRunID: Int64
    public var lastSeenRunID: Int64
    /// The case the finding belongs to (`iapguard cases show`), when the store has cases.
    public var caseID: String?
    /// That case's triage state (`open`, `investigating`, `confirmed-fraud`, `false-positive`, `resolved`).
    public var caseStatus: String?

    /// Whether the finding is an active hit (new or recurring, not suppressed or resolved).
    public var isActive: Bool { outcome == "hit" && (status == "new" || status == "recurring") }

    /// Sort rank of `level` (critical first).
    var levelRank: Int { Finding.Level(rawValue: level)?.rank ?? -1 }
}
