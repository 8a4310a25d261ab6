/// One case: the findings of one incident linked through the records they share, with the case's triage
/// state. What the report's case queue, `cases.csv` and `iapguard cases` show.
///
/// Money is milliunits of the reference currency; times are epoch milliseconds UTC (the end of the window of
/// the run that first and last saw a finding of the case).
public struct IncidentCase: Sendable, Hashable, Codable {
    /// Stable id (`C-` + 12 hex digits), derived from the anchor record when the case was first built.
    public var caseID: String
    /// The record the id was derived from (`t:<transaction id>`, `o:<original>`, `r:<order>`, `c:<credit>`,
    /// `k:<app account token>`, `u:<user>`).
    public var anchorKey: String
    public var status: CaseStatus
    /// Who set the status: an analyst's name, or `iapguard` for the job.
    public var statusBy: String
    public var statusAt: Int64
    public var statusNote: String?
    /// The highest level of its active findings.
    public var level: Finding.Level
    /// Money at risk, each transaction counted once (its largest amount) and user-level findings once each.
    public var moneyAtRisk: Int64
    /// Rule ids of its active findings, sorted.
    public var rules: [String]
    /// Ids of its active findings, sorted.
    public var findingIDs: [String]
    /// The earliest transaction of the case (shortest, then smallest id), if any.
    public var anchorTransactionID: String?
    /// The account that received what it should not have (the credited or acting account).
    public var gainingUserID: String?
    /// The account that lost out (the order's or token's owner), when the evidence names one.
    public var losingUserID: String?
    /// One line for humans, from the highest-priority finding.
    public var summary: String
    public var firstSeenRunID: Int64
    public var lastSeenRunID: Int64
    public var firstSeenAt: Int64?
    public var lastSeenAt: Int64?
    /// The run in which a finding last joined the case (the run that created it, at first).
    public var lastJoinedRunID: Int64
    /// Set when this run re-opened the case because a new finding joined it (shown in the report).
    public var reopenedThisRun: Bool

    public init(
        caseID: String, anchorKey: String, status: CaseStatus, statusBy: String, statusAt: Int64,
        statusNote: String? = nil, level: Finding.Level, moneyAtRisk: Int64, rules: [String], findingIDs: [String],
        summary: String, firstSeenRunID: Int64, lastSeenRunID: Int64
    ) {
        self.caseID = caseID
        self.anchorKey = anchorKey
        self.status = status
        self.statusBy = statusBy
        self.statusAt = statusAt
        self.statusNote = statusNote
        self.level = level
        self.moneyAtRisk = moneyAtRisk
        self.rules = rules
        self.findingIDs = findingIDs
        self.summary = summary
        self.firstSeenRunID = firstSeenRunID
        self.lastSeenRunID = lastSeenRunID
        self.lastJoinedRunID = lastSeenRunID
        self.reopenedThisRun = false
    }

    /// Queue order: open states first, then level (highest first), money at risk (largest first), case id.
    public static func queueOrder(_ a: IncidentCase, _ b: IncidentCase) -> Bool {
        if a.status.queueRank != b.status.queueRank { return a.status.queueRank < b.status.queueRank }
        if a.level != b.level { return a.level > b.level }
        if a.moneyAtRisk != b.moneyAtRisk { return a.moneyAtRisk > b.moneyAtRisk }
        return a.caseID < b.caseID
    }
}
