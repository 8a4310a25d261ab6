import CSQLite
import Foundation

/// Checks, while a rule's SQL is prepared, that it only reads the documented views, writes nothing and
/// calls only functions of the portable subset (the same SQL must later run on PostgreSQL).
///
/// Uses SQLite's authorizer callback, which reports every table read (with the view it happens through),
/// every function call and every write at prepare time.
final class SQLAccessAuditor {
    /// Views a rule may read.
    static let allowedViews: Set<String> = [
        "transactions", "sightings", "orders", "credits", "notifications", "refunds", "apps", "catalog", "testers",
        "fx_rates", "runs",
    ]
    /// Functions of the portable subset (lower-case). Anything else (`datetime`, `strftime`, `julianday`,
    /// `printf`, `iif`, `ifnull`, `group_concat`, `instr`, ...) is SQLite-only or not portable.
    static let portableFunctions: Set<String> = [
        "count", "sum", "min", "max", "avg", "coalesce", "nullif", "abs", "round", "length", "substr", "upper",
        "lower", "trim", "ltrim", "rtrim", "replace", "like", "row_number", "rank", "dense_rank", "lag", "lead",
        "first_value", "last_value", "ntile",
    ]

    /// Problems found: one line each.
    private(set) var violations: [String] = []

    fileprivate func record(action: Int32, _ a1: String?, _ a2: String?, _ inner: String?) {
        switch action {
        case SQLITE_SELECT, SQLITE_RECURSIVE:
            return
        case SQLITE_READ:
            // Reads through a documented view name its private tables with the view as `inner`; reads
            // through a CTE name the view itself as the table.
            let table = (a1 ?? "").lowercased()
            if !Self.allowedViews.contains(table), !Self.allowedViews.contains((inner ?? "").lowercased()) {
                note("reads '\(a1 ?? "?")', which is not one of the documented views (\(Self.allowedViews.sorted().joined(separator: ", ")))")
            }
        case SQLITE_FUNCTION:
            let name = (a2 ?? "").lowercased()
            if !Self.portableFunctions.contains(name) {
                note("calls \(name)(), which is outside the portable SQL subset")
            }
        default:
            note("is not a read-only query (authorizer action \(action) on '\(a1 ?? a2 ?? "?")')")
        }
    }

    private func note(_ message: String) {
        if !violations.contains(message) { violations.append(message) }
    }

    /// Prepares `sql` on `database` with the auditor installed; returns the statement's parameter names
    /// and result columns. Throws the SQLite error if it does not prepare.
    func prepare(_ sql: String, on database: SQLiteDatabase) throws -> (parameters: [String], columns: [String]) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_set_authorizer(
            database.handle,
            { context, action, a1, a2, _, inner in
                guard let context else { return SQLITE_OK }
                let auditor = Unmanaged<SQLAccessAuditor>.fromOpaque(context).takeUnretainedValue()
                auditor.record(
                    action: action, a1.map { String(cString: $0) }, a2.map { String(cString: $0) },
                    inner.map { String(cString: $0) })
                return SQLITE_OK
            }, context)
        defer { sqlite3_set_authorizer(database.handle, nil, nil) }
        let statement = try database.prepare(sql)
        defer { statement.finalize() }
        return (statement.parameterNames, statement.columnNames)
    }
}
