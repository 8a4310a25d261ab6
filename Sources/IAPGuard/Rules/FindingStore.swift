/// A store that can keep findings across runs (the `finding`, `finding_run` and `rule_run` tables of
/// schema migration 2). Reading goes through the public `findings` view with ``PurchaseStore/query``.
public protocol FindingStore: AnyObject {
    /// Writes one run's findings and rule statistics atomically: upserts the current state of every
    /// finding and appends its history row.
    func saveFindings(_ result: RuleRunResult, runID: Int64) throws
}
