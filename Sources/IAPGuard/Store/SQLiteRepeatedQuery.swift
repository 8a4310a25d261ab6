/// A ``RepeatedQuery`` on one SQLite statement, prepared once and re-bound for every run; reading stops after
/// `limit` rows instead of stepping through the rest of the result.
final class SQLiteRepeatedQuery: RepeatedQuery {
    private let statement: SQLiteStatement
    private let columns: [String]

    init(database: SQLiteDatabase, sql: String) throws {
        statement = try database.prepare(sql)
        columns = statement.columnNames
    }

    func run(
        parameters: [String: SQLValue], limit: Int, _ body: (_ columns: [String], _ row: [SQLValue]) -> Void
    ) throws {
        // Reset on every way out: a statement left mid-result keeps its read transaction open.
        defer { statement.reset() }
        try statement.bind(named: parameters)
        var count = 0
        while count < limit, try statement.step() {
            count += 1
            body(columns, statement.row())
        }
    }
}
