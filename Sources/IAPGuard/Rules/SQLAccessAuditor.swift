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
        "fx_rates", "runs", "users", "unchecked_transactions", "clawbacks",
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
            // Table reads are checked on the SQL text (see `privateTables(in:)`): SQLite reports a view's
            // private tables without the view's name when it flattens a subquery, and reports reads of
            // sqlite_master for every statement (the schema is read while preparing).
            return
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

    /// The tables of `database`, lower-cased.
    static func tableNames(of database: SQLiteDatabase) throws -> Set<String> {
        Set(
            try database.query("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap {
                $0.first?.textValue?.lowercased()
            })
    }

    /// What is wrong with a rule that names `table`, a private table.
    static func privateTableProblem(_ table: String) -> String {
        let what = isCatalog(table) ? "the SQLite catalog" : "a private table"
        return
            "reads '\(table)', \(what): use the documented views (\(allowedViews.sorted().joined(separator: ", ")))"
    }

    /// Whether `name` (lower-case) is one of SQLite's own tables (`sqlite_master`, `sqlite_schema`,
    /// `sqlite_sequence`, `sqlite_stat1`, ...) or a `pragma_*` table-valued function: none of them exists on
    /// PostgreSQL, and they describe the store, not the purchases.
    static func isCatalog(_ name: String) -> Bool {
        name.hasPrefix("sqlite_") || name.hasPrefix("pragma_")
    }

    /// Names of tables (not documented views) that `sql` mentions as identifiers, outside string literals
    /// and comments. `tables` are the database's table names.
    static func privateTables(in sql: String, tables: Set<String>) -> [String] {
        var found: [String] = []
        var token = ""
        var index = sql.startIndex
        func flush() {
            let name = token.lowercased()
            if tables.contains(name) || isCatalog(name), !allowedViews.contains(name), !found.contains(name) {
                found.append(name)
            }
            token = ""
        }
        while index < sql.endIndex {
            let c = sql[index]
            let next = sql.index(after: index)
            if c == "'" || c == "\"" {
                flush()
                var end = next
                while end < sql.endIndex, sql[end] != c { end = sql.index(after: end) }
                index = end < sql.endIndex ? sql.index(after: end) : end
                continue
            }
            if c == "-", next < sql.endIndex, sql[next] == "-" {
                flush()
                while index < sql.endIndex, sql[index] != "\n" { index = sql.index(after: index) }
                continue
            }
            if c.isLetter || c.isNumber || c == "_" { token.append(c) } else { flush() }
            index = next
        }
        flush()
        return found
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
        for table in Self.privateTables(in: sql, tables: try Self.tableNames(of: database)) {
            note(Self.privateTableProblem(table))
        }
        return (statement.parameterNames, statement.columnNames)
    }
}
