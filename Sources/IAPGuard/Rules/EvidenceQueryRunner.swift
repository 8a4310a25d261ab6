/// Runs a rule's evidence queries for its findings, one finding after the other, so that their cost follows
/// their output rather than the number of findings.
///
/// Each evidence query is made once per rule evaluation as the store's ``RepeatedQuery`` (on SQLite a
/// statement prepared once and re-bound for every finding, reading stopped after the query's `limit` rows).
/// Rows, their order and the limit are the same as running the query once per finding.
final class EvidenceQueryRunner {
    private let store: any PurchaseStore
    private var queries: [String: any RepeatedQuery] = [:]

    init(store: any PurchaseStore) {
        self.store = store
    }

    /// Runs `sql` with `parameters` and hands at most `limit` rows, with their column names, to `body`.
    func run(
        _ sql: String, parameters: [String: SQLValue], limit: Int,
        _ body: (_ columns: [String], _ row: [SQLValue]) -> Void
    ) throws {
        guard limit > 0 else { return }
        let query = try queries[sql] ?? store.repeatedQuery(sql)
        queries[sql] = query
        try query.run(parameters: parameters, limit: limit, body)
    }
}
