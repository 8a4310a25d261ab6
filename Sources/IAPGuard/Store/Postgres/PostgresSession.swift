import Foundation
import Logging
import PostgresNIO

/// One PostgreSQL connection driven synchronously, for the synchronous pipeline.
///
/// postgres-nio is asynchronous; the session owns a dedicated one-thread `EventLoopGroup` and the calling
/// thread blocks on each future (`wait()`), which is safe because the caller is never one of that group's
/// threads. Rows come back typed as ``SQLValue`` the way SQLite returns them: integers and booleans as
/// `.integer`, floating point as `.real`, `numeric` as `.integer` when whole and `.real` otherwise, times
/// as epoch milliseconds, the rest as `.text`. Not thread-safe: one session per thread, like ``SQLiteDatabase``.
public final class PostgresSession: SQLExecutor {
    public let settings: PostgresSettings
    let connection: PostgresConnection
    private let group: MultiThreadedEventLoopGroup
    let logger: Logger
    private var transactionDepth = 0

    public var dialect: SQLDialect { .postgres }

    /// Connects (and sets the schema, creating it if needed). Throws ``PostgresStoreError`` with the
    /// server's message, never the password.
    public init(settings: PostgresSettings, createSchema: Bool = true) throws {
        self.settings = settings
        var logger = Logger(label: "iapguard.postgres")
        logger.logLevel = .error
        self.logger = logger
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.group = group
        do {
            let password = try settings.password()
            let tls: PostgresConnection.Configuration.TLS
            switch settings.tls {
            case .disable:
                tls = .disable
            case .require:
                var configuration = TLSConfiguration.makeClientConfiguration()
                configuration.certificateVerification = .none
                tls = .require(try NIOSSLContext(configuration: configuration))
            case .verifyFull:
                tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
            let configuration: PostgresConnection.Configuration
            if settings.host.hasPrefix("/") {
                let socket = "\(settings.host)/.s.PGSQL.\(settings.port)"
                configuration = .init(
                    unixSocketPath: socket, username: settings.user, password: password, database: settings.database)
            } else {
                configuration = .init(
                    host: settings.host, port: settings.port, username: settings.user, password: password,
                    database: settings.database, tls: tls)
            }
            connection = try PostgresConnection.connect(
                on: group.next(), configuration: configuration, id: 1, logger: logger
            ).wait()
        } catch {
            try? group.syncShutdownGracefully()
            throw PostgresStoreError(context: "cannot connect to \(settings)", error: error)
        }
        if let schema = settings.schema {
            // The name was checked to be a plain identifier when the URL was parsed.
            if createSchema { try execute("CREATE SCHEMA IF NOT EXISTS \(schema)") }
            try execute("SET search_path TO \(schema)")
        }
    }

    deinit {
        try? connection.close().wait()
        try? group.syncShutdownGracefully()
    }

    // MARK: SQLExecutor

    public func execute(_ sql: String) throws {
        for statement in SQLDialect.statements(in: sql) {
            _ = try send(PostgresQuery(unsafeSQL: statement), sql: statement)
        }
    }

    @discardableResult
    public func run(_ sql: String, _ parameters: [SQLValue]) throws -> Int {
        let text = dialect.positional(sql)
        let result = try send(PostgresQuery(unsafeSQL: text, binds: Self.bindings(parameters)), sql: text)
        return result.metadata.rows ?? 0
    }

    public func query(_ sql: String, _ parameters: [SQLValue]) throws -> [[SQLValue]] {
        let text = dialect.positional(sql)
        let result = try send(PostgresQuery(unsafeSQL: text, binds: Self.bindings(parameters)), sql: text)
        return try result.rows.map { row in try row.map(Self.value) }
    }

    public func query(
        _ sql: String, named parameters: [String: SQLValue],
        _ body: (_ columns: [String], _ row: [SQLValue]) throws -> Void
    ) throws {
        let (text, names) = dialect.named(sql)
        var values: [SQLValue] = []
        for name in names {
            guard let value = parameters[name] else {
                throw PostgresStoreError(message: "no value for parameter :\(name)", sql: sql)
            }
            values.append(value)
        }
        let result = try send(PostgresQuery(unsafeSQL: text, binds: Self.bindings(values)), sql: text)
        for row in result.rows {
            try body(row.map(\.columnName), try row.map(Self.value))
        }
    }

    public func transaction<T>(_ body: () throws -> T) throws -> T {
        if transactionDepth > 0 {
            // Nested: a savepoint, so a failure inside can be rolled back without aborting the outer
            // transaction (PostgreSQL refuses every statement after a failed one until then).
            transactionDepth += 1
            let savepoint = "iapguard_nested_\(transactionDepth)"
            defer { transactionDepth -= 1 }
            try execute("SAVEPOINT \(savepoint)")
            do {
                let result = try body()
                try execute("RELEASE SAVEPOINT \(savepoint)")
                return result
            } catch {
                try? execute("ROLLBACK TO SAVEPOINT \(savepoint)")
                try? execute("RELEASE SAVEPOINT \(savepoint)")
                throw error
            }
        }
        try execute("BEGIN")
        transactionDepth = 1
        defer { transactionDepth = 0 }
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    public func columnNames(of relation: String) throws -> [String] {
        try query(
            """
            SELECT column_name FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position
            """, [.text(relation)]
        ).compactMap { $0.first?.textValue }
    }

    // MARK: Wire

    /// Sends one statement and waits for all of its rows.
    func send(_ query: PostgresQuery, sql: String) throws -> PostgresQueryResult {
        do {
            return try connection.query(query, logger: logger).wait()
        } catch {
            throw PostgresStoreError(context: nil, error: error, sql: sql)
        }
    }

    /// Binds values with their natural types (int8, float8, text; NULL untyped).
    static func bindings(_ values: [SQLValue]) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .null: bindings.appendNull()
            case .integer(let v): bindings.append(v)
            case .real(let v): bindings.append(v)
            case .text(let v): bindings.append(v)
            }
        }
        return bindings
    }

    /// A result cell as the value SQLite would have returned.
    static func value(_ cell: PostgresCell) throws -> SQLValue {
        guard cell.bytes != nil else { return .null }
        switch cell.dataType {
        case .int2, .int4, .int8:
            return .integer(try cell.decode(Int64.self))
        case .bool:
            return .integer(try cell.decode(Bool.self) ? 1 : 0)
        case .float4, .float8:
            return .real(try cell.decode(Double.self))
        case .timestamp, .timestamptz, .date:
            // Times become epoch milliseconds, the store's time unit.
            return .integer(Int64((try cell.decode(Date.self).timeIntervalSince1970 * 1000).rounded()))
        case .numeric:
            let text = "\(try cell.decode(Decimal.self))"
            if !text.contains("."), let whole = Int64(text) { return .integer(whole) }
            return Double(text).map(SQLValue.real) ?? .text(text)
        default:
            return .text(try cell.decode(String.self))
        }
    }
}

/// A PostgreSQL failure with the server's message (and the statement, shortened), never a password.
public struct PostgresStoreError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var sql: String?

    public init(message: String, sql: String? = nil) {
        self.message = message
        self.sql = sql
    }

    init(context: String?, error: any Error, sql: String? = nil) {
        var text: String
        if let error = error as? PSQLError {
            text = error.serverInfo?[.message] ?? "\(error.code)"
            if let detail = error.serverInfo?[.detail] { text += " (\(detail))" }
        } else {
            text = "\(error)"
        }
        if let context { text = "\(context): \(text)" }
        self.init(message: text, sql: sql)
    }

    public var description: String {
        if let sql { return "PostgreSQL: \(message) (in: \(sql.prefix(200)))" }
        return "PostgreSQL: \(message)"
    }
}
