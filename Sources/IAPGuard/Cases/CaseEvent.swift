/// One entry of a case's append-only history (the `case_history` view).
public struct CaseEvent: Sendable, Hashable, Codable {
    public var eventID: Int64
    public var caseID: String
    /// Epoch ms.
    public var at: Int64
    /// The run that made the change (nil for an analyst's `cases set-status`).
    public var runID: Int64?
    /// An analyst's name, or `iapguard` for the job.
    public var by: String
    public var from: CaseStatus?
    public var to: CaseStatus
    public var note: String?

    public init(
        eventID: Int64, caseID: String, at: Int64, runID: Int64?, by: String, from: CaseStatus?, to: CaseStatus,
        note: String?
    ) {
        self.eventID = eventID
        self.caseID = caseID
        self.at = at
        self.runID = runID
        self.by = by
        self.from = from
        self.to = to
        self.note = note
    }
}
