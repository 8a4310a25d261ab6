import Foundation

/// The store on PostgreSQL (or Citus): the same tables, views and statements as ``SQLiteStore`` through
/// the ``SQLDialect`` rewrite, on one synchronous ``PostgresSession``.
///
/// New orders, credits and sightings are bulk-loaded with `COPY` into a session-local staging table and
/// inserted set-wise (see ``PostgresBulkWriter``); rows that already exist take the row-by-row path so
/// updates keep their `change_log` entries, exactly as on SQLite.
public final class PostgresStore: SQLBackedStore {
    public let session: PostgresSession
    /// Whether batches use the `COPY` fast path (off: every record goes row by row).
    public var usesCopy = true

    /// Connects to the database named by `settings`; call ``migrate()`` before use.
    public init(settings: PostgresSettings) throws {
        session = try PostgresSession(settings: settings)
    }

    public var connection: any SQLExecutor { session }

    public var location: String { session.settings.description }

    /// Takes a session-level advisory lock keyed by the store's schema; the server drops it when the
    /// connection ends (even when the process is killed).
    public func acquireRunLock() throws -> AnyObject {
        let key = "iapguard run lock"
        let taken = try session.query("SELECT pg_try_advisory_lock(hashtext(? || current_schema()))", [.text(key)])
        guard taken.first?.first?.integerValue == 1 else {
            throw RunLock.Held(path: location, holder: "another session holds the PostgreSQL advisory lock")
        }
        return PostgresRunLock(session: session, key: key)
    }

    /// Tables whose planner statistics are refreshed before the first read after writes.
    static let analyzedTables = [
        "apple_transaction", "apple_sighting", "backend_order", "credit", "notification", "ref_app", "ref_product",
        "ref_tester", "ref_fx_rate", "finding",
    ]
    /// Whether rows changed since the statistics were last refreshed (true at start: a run begins by writing).
    private var needsAnalyze = true

    public func write(_ batch: IngestBatch, runID: Int64) throws -> WriteCounts {
        needsAnalyze = true
        guard usesCopy else { return try writeRowByRow(batch, runID: runID) }
        return try session.transaction {
            try PostgresBulkWriter(store: self, runID: runID).write(batch)
        }
    }

    /// Runs a read-only query (rules, reports). The first read after writes runs `ANALYZE` on the store's
    /// tables: right after a bulk load autovacuum has not caught up, and stale statistics made some rule
    /// plans a hundred times slower (IAP-008: 4.3 s before, 35 ms after, on a 1000-user world).
    public func query(
        _ sql: String, parameters: [String: SQLValue], _ body: ([String], [SQLValue]) throws -> Void
    ) throws {
        if needsAnalyze {
            needsAnalyze = false
            try session.execute(Self.analyzedTables.map { "ANALYZE \($0)" }.joined(separator: ";\n"))
        }
        try session.query(sql, named: parameters, body)
    }
}

/// The advisory lock held for one run; released when dropped.
final class PostgresRunLock {
    private let session: PostgresSession
    private let key: String

    init(session: PostgresSession, key: String) {
        self.session = session
        self.key = key
    }

    deinit {
        _ = try? session.query("SELECT pg_advisory_unlock(hashtext(? || current_schema()))", [.text(key)])
    }
}
