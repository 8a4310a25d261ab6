import CSQLite
import Foundation

/// A value bound to or read from SQL. Attacker-controlled text only ever reaches SQL as a bound value.
public enum SQLValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)

    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let v): return String(v)
        case .real(let v): return String(v)
        case .text(let s): return s
        }
    }

    /// The value as text (`nil` for NULL); numbers are rendered in their canonical decimal form.
    public var textValue: String? {
        switch self {
        case .null: return nil
        case .integer(let v): return String(v)
        case .real(let v): return String(v)
        case .text(let s): return s
        }
    }

    /// The value as an integer when it is one (or integral text).
    public var integerValue: Int64? {
        switch self {
        case .integer(let v): return v
        case .real(let v): return v.rounded() == v ? Int64(exactly: v) : nil
        case .text(let s): return Int64(s)
        case .null: return nil
        }
    }

    /// The value as a double when numeric.
    public var doubleValue: Double? {
        switch self {
        case .integer(let v): return Double(v)
        case .real(let v): return v
        case .text(let s): return Double(s)
        case .null: return nil
        }
    }

    public var isNull: Bool { if case .null = self { return true } else { return false } }
}

extension SQLValue {
    /// Wraps an optional string (`nil` → NULL).
    public static func of(_ s: String?) -> SQLValue { s.map(SQLValue.text) ?? .null }
    /// Wraps an optional integer (`nil` → NULL).
    public static func of(_ i: Int64?) -> SQLValue { i.map(SQLValue.integer) ?? .null }
    /// Wraps an optional Int (`nil` → NULL).
    public static func of(_ i: Int?) -> SQLValue { i.map { SQLValue.integer(Int64($0)) } ?? .null }
}

/// An error from SQLite, with the statement that caused it.
public struct SQLiteError: Error, Sendable, CustomStringConvertible {
    public let code: Int32
    public let message: String
    public let sql: String?

    public var description: String {
        let hint = isDamagedStore ? "; the store file is damaged: restore it from a backup" : ""
        if let sql { return "SQLite error \(code): \(message)\(hint) (in: \(sql.prefix(200)))" }
        return "SQLite error \(code): \(message)\(hint)"
    }

    /// The file is not a database or is corrupt (`SQLITE_CORRUPT`, `SQLITE_NOTADB`).
    public var isDamagedStore: Bool { code == 11 || code == 26 }
}

/// A thin, fast wrapper over the SQLite C API: one connection, prepared statements, bound parameters.
///
/// Not thread-safe: use one connection per thread (the pipeline writes from one task).
public final class SQLiteDatabase {
    // The raw handle; `OpaquePointer` from the C API.
    let handle: OpaquePointer
    public let path: String
    private var statementCache: [String: SQLiteStatement] = [:]

    /// How to open the database.
    public enum Mode: Sendable {
        case readWrite
        case readOnly
    }

    /// Opens (creating if needed, in `.readWrite`) the database at `path`. `":memory:"` for a private in-memory one.
    public init(path: String, mode: Mode = .readWrite) throws {
        _ = Self.configured
        var db: OpaquePointer?
        let flags: Int32 =
            mode == .readOnly
            ? SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
            : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, message: "\(message): \(path)", sql: nil)
        }
        self.handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 10_000)
    }

    /// Process-wide SQLite settings, applied once before the first connection opens.
    private static let configured: Bool = iapguard_sqlite3_disable_memstatus() == SQLITE_OK

    deinit {
        for statement in statementCache.values { statement.finalize() }
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements without parameters (DDL, pragmas).
    public func execute(_ sql: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? "unknown error"
            sqlite3_free(errorMessage)
            throw SQLiteError(code: rc, message: message, sql: sql)
        }
    }

    /// Prepares a statement (not cached).
    public func prepare(_ sql: String) throws -> SQLiteStatement {
        try SQLiteStatement(database: self, sql: sql)
    }

    /// A cached prepared statement for hot paths; reset before return.
    public func cached(_ sql: String) throws -> SQLiteStatement {
        if let statement = statementCache[sql] {
            statement.reset()
            return statement
        }
        let statement = try prepare(sql)
        statementCache[sql] = statement
        return statement
    }

    /// Runs a statement with positional parameters and returns the number of rows changed.
    @discardableResult
    public func run(_ sql: String, _ parameters: [SQLValue] = []) throws -> Int {
        let statement = try cached(sql)
        try statement.bind(parameters)
        try statement.step()
        return Int(sqlite3_changes(handle))
    }

    /// Runs a query and returns all rows, each as an array of values in column order.
    public func query(_ sql: String, _ parameters: [SQLValue] = []) throws -> [[SQLValue]] {
        let statement = try cached(sql)
        try statement.bind(parameters)
        var rows: [[SQLValue]] = []
        while try statement.step() {
            rows.append(statement.row())
        }
        return rows
    }

    /// Runs a query with named parameters (`:name`) and hands each row to `body` with column names.
    public func query(
        _ sql: String, named parameters: [String: SQLValue],
        _ body: (_ columns: [String], _ row: [SQLValue]) throws -> Void
    ) throws {
        let statement = try prepare(sql)
        defer { statement.finalize() }
        try statement.bind(named: parameters)
        let columns = statement.columnNames
        while try statement.step() {
            try body(columns, statement.row())
        }
    }

    /// Runs a query (a backend source's) and hands each row to `body` with column names and the indexes of
    /// the text values that are not valid UTF-8 or hold a NUL byte (see ``SQLiteStatement/invalidUTF8Columns()``).
    public func queryReportingInvalidUTF8(
        _ sql: String, _ body: (_ columns: [String], _ row: [SQLValue], _ invalidUTF8: [Int]) throws -> Void
    ) throws {
        let statement = try prepare(sql)
        defer { statement.finalize() }
        let columns = statement.columnNames
        while try statement.step() {
            try body(columns, statement.row(), statement.invalidUTF8Columns())
        }
    }

    /// The first column of the first row, or `nil`.
    public func scalar(_ sql: String, _ parameters: [SQLValue] = []) throws -> SQLValue? {
        try query(sql, parameters).first?.first
    }

    /// Runs `body` inside `BEGIN IMMEDIATE … COMMIT`, rolling back if it throws. Inside an open
    /// transaction it nests as a savepoint (the outer transaction decides what is committed).
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        if sqlite3_get_autocommit(handle) == 0 {
            try execute("SAVEPOINT nested_transaction")
            do {
                let result = try body()
                try execute("RELEASE nested_transaction")
                return result
            } catch {
                try? execute("ROLLBACK TO nested_transaction")
                try? execute("RELEASE nested_transaction")
                throw error
            }
        }
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Whether no transaction is open on this connection.
    public var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }

    /// The rowid of the last insert on this connection.
    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    func lastErrorMessage() -> String { String(cString: sqlite3_errmsg(handle)) }
}

/// A prepared statement. Reuse it by binding new parameters; it resets itself when bound.
public final class SQLiteStatement {
    private var handle: OpaquePointer?
    private unowned let database: SQLiteDatabase
    public let sql: String

    init(database: SQLiteDatabase, sql: String) throws {
        var statement: OpaquePointer?
        // One statement only: SQLite would silently ignore whatever follows the first one (a rule or a
        // source query ending `; DELETE …` must be an error, not half-run). Comments and `;` may follow.
        let trailing: Int32? = sql.withCString { base in
            var tail: UnsafePointer<CChar>?
            let rc = sqlite3_prepare_v2(database.handle, base, -1, &statement, &tail)
            guard rc == SQLITE_OK, let tail, tail.pointee != 0 else { return rc == SQLITE_OK ? nil : rc }
            var extra: OpaquePointer?
            let tailRC = sqlite3_prepare_v2(database.handle, tail, -1, &extra, nil)
            defer { if let extra { sqlite3_finalize(extra) } }
            return (tailRC == SQLITE_OK && extra == nil) ? nil : -1
        }
        if let trailing {
            if let statement { sqlite3_finalize(statement) }
            if trailing == -1 {
                throw SQLiteError(
                    code: SQLITE_ERROR, message: "more than one SQL statement: give exactly one", sql: sql)
            }
            throw SQLiteError(code: trailing, message: database.lastErrorMessage(), sql: sql)
        }
        guard let statement else {
            throw SQLiteError(code: SQLITE_MISUSE, message: "no SQL statement", sql: sql)
        }
        self.handle = statement
        self.database = database
        self.sql = sql
    }

    deinit { finalize() }

    func finalize() {
        if let handle { sqlite3_finalize(handle) }
        handle = nil
    }

    /// Resets the statement for another execution and clears bindings.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Names of the result columns.
    public var columnNames: [String] {
        (0..<sqlite3_column_count(handle)).map { String(cString: sqlite3_column_name(handle, $0)) }
    }

    /// Names of the named parameters (without their `:`/`@`/`$` prefix), in index order.
    public var parameterNames: [String] {
        let count = sqlite3_bind_parameter_count(handle)
        guard count > 0 else { return [] }
        return (1...count).compactMap { index in
            sqlite3_bind_parameter_name(handle, index).map { String(String(cString: $0).dropFirst()) }
        }
    }

    /// Binds positional parameters (1-based in SQLite, 0-based here).
    public func bind(_ values: [SQLValue]) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (index, value) in values.enumerated() {
            try bind(value, at: Int32(index + 1))
        }
    }

    /// Binds named parameters (`:name`). A name the statement uses but `values` lacks is an error.
    public func bind(named values: [String: SQLValue]) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        let count = sqlite3_bind_parameter_count(handle)
        guard count > 0 else { return }
        for index in 1...count {
            guard let cName = sqlite3_bind_parameter_name(handle, index) else {
                throw SQLiteError(code: SQLITE_MISUSE, message: "positional parameter in a named query", sql: sql)
            }
            let name = String(String(cString: cName).dropFirst())
            guard let value = values[name] else {
                throw SQLiteError(code: SQLITE_MISUSE, message: "no value for parameter :\(name)", sql: sql)
            }
            try bind(value, at: index)
        }
    }

    /// Resets the statement for another execution, keeping its bindings (the caller rebinds every
    /// parameter): the hot write path binds fields directly instead of building ``SQLValue`` arrays.
    func rewind() {
        sqlite3_reset(handle)
    }

    /// Binds optional text at a 1-based index (`nil` → NULL).
    func bind(text value: String?, at index: Int32) throws {
        let rc: Int32
        if let value {
            // As `bind(_:at:)` binds text (NUL-terminated, SQLITE_TRANSIENT), so both paths store the same bytes.
            rc = sqlite3_bind_text(handle, index, value, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        } else {
            rc = sqlite3_bind_null(handle, index)
        }
        if rc != SQLITE_OK { throw SQLiteError(code: rc, message: database.lastErrorMessage(), sql: sql) }
    }

    /// Binds an optional integer at a 1-based index (`nil` → NULL).
    func bind(integer value: Int64?, at index: Int32) throws {
        let rc = value.map { sqlite3_bind_int64(handle, index, $0) } ?? sqlite3_bind_null(handle, index)
        if rc != SQLITE_OK { throw SQLiteError(code: rc, message: database.lastErrorMessage(), sql: sql) }
    }

    /// Binds positional values starting at a 1-based index, without resetting the statement.
    func bind(_ values: [SQLValue], from first: Int32) throws {
        for (offset, value) in values.enumerated() { try bind(value, at: first + Int32(offset)) }
    }

    /// Runs a statement that returns no rows; returns the number of rows it changed.
    func runChanges() throws -> Int {
        try step()
        return Int(sqlite3_changes(database.handle))
    }

    private func bind(_ value: SQLValue, at index: Int32) throws {
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(handle, index)
        case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
        case .real(let v): rc = sqlite3_bind_double(handle, index, v)
        case .text(let s):
            // SQLITE_TRANSIENT: SQLite copies the bytes before this call returns.
            rc = sqlite3_bind_text(handle, index, s, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
        }
        if rc != SQLITE_OK {
            throw SQLiteError(code: rc, message: database.lastErrorMessage(), sql: sql)
        }
    }

    /// Steps once. Returns `true` when a row is available, `false` when done.
    @discardableResult
    public func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default:
            let message = database.lastErrorMessage()
            sqlite3_reset(handle)
            throw SQLiteError(code: rc, message: message, sql: sql)
        }
    }

    /// The columns of the current row (after ``row()``, which reads blobs as text too) whose text is not
    /// valid UTF-8 or holds a NUL byte: ``row()`` gives those with U+FFFD in place of the bad bytes, or cut
    /// at the NUL.
    public func invalidUTF8Columns() -> [Int] {
        var invalid: [Int] = []
        for index in 0..<sqlite3_column_count(handle) where sqlite3_column_type(handle, index) == SQLITE_TEXT {
            guard let text = sqlite3_column_text(handle, index) else { continue }
            let length = Int(sqlite3_column_bytes(handle, index))
            let bytes = UnsafeBufferPointer(start: text, count: length)
            if bytes.contains(0) || String(validating: bytes, as: UTF8.self) == nil { invalid.append(Int(index)) }
        }
        return invalid
    }

    /// The current row's values.
    public func row() -> [SQLValue] {
        let count = sqlite3_column_count(handle)
        var values: [SQLValue] = []
        values.reserveCapacity(Int(count))
        for index in 0..<count {
            switch sqlite3_column_type(handle, index) {
            case SQLITE_INTEGER: values.append(.integer(sqlite3_column_int64(handle, index)))
            case SQLITE_FLOAT: values.append(.real(sqlite3_column_double(handle, index)))
            case SQLITE_NULL: values.append(.null)
            default:
                if let text = sqlite3_column_text(handle, index) {
                    values.append(.text(String(cString: text)))
                } else {
                    values.append(.null)
                }
            }
        }
        return values
    }
}
