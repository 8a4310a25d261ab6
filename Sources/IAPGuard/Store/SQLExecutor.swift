/// A database connection the store's portable SQL runs on: SQLite (``SQLiteDatabase``) or PostgreSQL
/// (``PostgresSession``). Statements use `?` placeholders (rewritten per ``SQLDialect``); queries with
/// `:name` parameters are for rules and reports.
public protocol SQLExecutor: AnyObject {
    /// How this connection spells placeholders, DDL types and booleans.
    var dialect: SQLDialect { get }
    /// Runs one or more statements without parameters (DDL).
    func execute(_ sql: String) throws
    /// Runs a statement with positional `?` parameters; returns the number of rows changed.
    @discardableResult
    func run(_ sql: String, _ parameters: [SQLValue]) throws -> Int
    /// Runs a query with positional `?` parameters and returns every row.
    func query(_ sql: String, _ parameters: [SQLValue]) throws -> [[SQLValue]]
    /// Runs a query with named `:name` parameters, handing each row with its column names to `body`.
    func query(
        _ sql: String, named parameters: [String: SQLValue],
        _ body: (_ columns: [String], _ row: [SQLValue]) throws -> Void
    ) throws
    /// Runs `body` in one transaction, rolling back if it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T
    /// The column names of a table or view, in order.
    func columnNames(of relation: String) throws -> [String]
}

extension SQLiteDatabase: SQLExecutor {
    public var dialect: SQLDialect { .sqlite }

    public func columnNames(of relation: String) throws -> [String] {
        let statement = try prepare("SELECT * FROM \(relation)")
        defer { statement.finalize() }
        return statement.columnNames
    }
}
