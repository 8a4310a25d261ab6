/// Runs a rule's evidence queries for its findings, one finding after the other, so that their cost follows
/// their output rather than the number of findings.
///
/// On SQLite each evidence query is prepared once per rule evaluation and re-bound for every finding (before,
/// every finding re-prepared every query over the views), and reading stops after the query's `limit` rows
/// instead of stepping through the rest of the result. Rows, their order and the limit are the same as
/// running the query once per finding. Other stores run the query through ``PurchaseStore/query``.
final class EvidenceQueryRunner {
    private let store: any PurchaseStore
    private var statements: [String: SQLiteStatement] = [:]
    private var columns: [String: [String]] = [:]

    init(store: any PurchaseStore) {
        self.store = store
    }

    deinit {
        for statement in statements.values { statement.finalize() }
    }

    /// Runs `sql` with `parameters` and hands at most `limit` rows, with their column names, to `body`.
    func run(
        _ sql: String, parameters: [String: SQLValue], limit: Int,
        _ body: (_ columns: [String], _ row: [SQLValue]) -> Void
    ) throws {
        guard limit > 0 else { return }
        guard let database = (store as? SQLiteStore)?.database else {
            var count = 0
            // In a savepoint on PostgreSQL: a failing evidence query is a warning, not the end of the stage.
            try store.isolatingFailure {
                try store.query(sql, parameters: parameters) { columns, values in
                    guard count < limit else { return }
                    count += 1
                    body(columns, values)
                }
            }
            return
        }
        let statement: SQLiteStatement
        let names: [String]
        if let cached = statements[sql], let cachedNames = columns[sql] {
            statement = cached
            names = cachedNames
        } else {
            statement = try database.prepare(sql)
            names = statement.columnNames
            statements[sql] = statement
            columns[sql] = names
        }
        // Reset on every way out: a statement left mid-result keeps its read transaction open.
        defer { statement.reset() }
        try statement.bind(named: parameters)
        var count = 0
        while count < limit, try statement.step() {
            count += 1
            body(names, statement.row())
        }
    }
}
