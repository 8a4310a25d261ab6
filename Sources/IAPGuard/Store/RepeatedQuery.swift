/// One read-only query run many times with different parameters, reading at most `limit` rows each time
/// (the rules' evidence queries, once per finding). Made by ``PurchaseStore/repeatedQuery(_:)``: SQLite keeps
/// the statement prepared between runs; other stores run it through ``PurchaseStore/query(_:parameters:_:)``.
public protocol RepeatedQuery: AnyObject {
    /// Runs the query with `parameters` and hands at most `limit` rows, with their column names, to `body`.
    func run(
        parameters: [String: SQLValue], limit: Int, _ body: (_ columns: [String], _ row: [SQLValue]) -> Void
    ) throws
}

/// A ``RepeatedQuery`` through the store's ordinary query path, each run isolated so that a failing query
/// does not spoil the enclosing transaction (PostgreSQL).
final class StoreRepeatedQuery: RepeatedQuery {
    private let store: any PurchaseStore
    private let sql: String

    init(store: any PurchaseStore, sql: String) {
        self.store = store
        self.sql = sql
    }

    func run(
        parameters: [String: SQLValue], limit: Int, _ body: (_ columns: [String], _ row: [SQLValue]) -> Void
    ) throws {
        var count = 0
        try store.isolatingFailure {
            try store.query(sql, parameters: parameters) { columns, values in
                guard count < limit else { return }
                count += 1
                body(columns, values)
            }
        }
    }
}
