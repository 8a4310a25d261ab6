import Foundation

/// The embedded default store: one SQLite file in WAL mode. The statements are shared with every
/// ``SQLBackedStore``.
public final class SQLiteStore: SQLBackedStore {
    public let database: SQLiteDatabase

    /// Opens or creates the store at `path` (`":memory:"` for tests). Read-only stores are for lookups.
    public init(path: String, readOnly: Bool = false) throws {
        if !readOnly, path != ":memory:" {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        database = try SQLiteDatabase(path: path, mode: readOnly ? .readOnly : .readWrite)
        if !readOnly {
            if path != ":memory:" { try database.execute("PRAGMA journal_mode = WAL") }
            try database.execute("PRAGMA synchronous = NORMAL")
            // A write group's dirty pages stay in memory until its commit instead of spilling to the WAL
            // (where a page spilled twice is written twice). Allocated as used, up to 64 MiB.
            try database.execute("PRAGMA cache_size = -65536")
        }
        try database.execute("PRAGMA foreign_keys = OFF")
    }

    public var connection: any SQLExecutor { database }

    /// The prepared insert statements of the write path (made on first write).
    private var batchWriter: SQLiteBatchWriter?

    /// Writes a batch in one transaction through ``SQLiteBatchWriter``: insert first, read and compare only
    /// when the key exists. Same rows, `change_log` entries and counts as ``writeRowByRow(_:runID:)``.
    public func write(_ batch: IngestBatch, runID: Int64) throws -> WriteCounts {
        let writer = try batchWriter ?? SQLiteBatchWriter(database: database)
        batchWriter = writer
        return try database.transaction { try writer.write(batch, runID: runID, store: self) }
    }

    public var location: String { database.path }

    /// Evidence and other per-row queries keep their statement prepared (``SQLiteRepeatedQuery``).
    public func repeatedQuery(_ sql: String) throws -> any RepeatedQuery {
        try SQLiteRepeatedQuery(database: database, sql: sql)
    }

    /// The tables a first load fills with most rows; their secondary indexes are built after it.
    static let bulkLoadTables = ["apple_sighting", "apple_transaction", "backend_order", "credit"]

    /// On a store whose ``bulkLoadTables`` are all empty, records the definition of each of their secondary
    /// indexes in `deferred_index` and drops it, in one transaction: SQLite sorts once when it builds an
    /// index over loaded rows, while keeping ten indexes up to date row by row costs about as much as the
    /// rows themselves. Only non-unique indexes are deferred (the write path looks rows up by primary key).
    /// Returns true also when a killed run left indexes deferred: its load goes on.
    public func beginBulkLoad() throws -> Bool {
        try database.transaction {
            if try !database.query("SELECT 1 FROM deferred_index LIMIT 1").isEmpty { return true }
            for table in Self.bulkLoadTables where try !database.query("SELECT 1 FROM \(table) LIMIT 1").isEmpty {
                return false
            }
            let placeholders = Self.bulkLoadTables.map { _ in "?" }.joined(separator: ", ")
            let indexes = try database.query(
                "SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL "
                    + "AND tbl_name IN (\(placeholders)) ORDER BY name",
                Self.bulkLoadTables.map { .text($0) })
            var deferred = 0
            for row in indexes {
                guard let name = row[0].textValue, let table = row[1].textValue, let definition = row[2].textValue,
                    !definition.uppercased().hasPrefix("CREATE UNIQUE")
                else { continue }
                try database.run(
                    "INSERT INTO deferred_index (name, table_name, definition) VALUES (?, ?, ?)",
                    [.text(name), .text(table), .text(definition)])
                try database.execute("DROP INDEX \"\(name.replacingOccurrences(of: "\"", with: "\"\""))\"")
                deferred += 1
            }
            return deferred > 0
        }
    }

    /// Builds each deferred index and forgets its definition, one index per transaction, so that a run
    /// killed here leaves the rest for the next run to build.
    public func finishBulkLoad() throws {
        let rows = try database.query("SELECT name, definition FROM deferred_index ORDER BY name")
        for row in rows {
            guard let name = row[0].textValue, let definition = row[1].textValue else { continue }
            try database.transaction {
                try database.execute(definition)
                try database.run("DELETE FROM deferred_index WHERE name = ?", [.text(name)])
            }
        }
    }

    /// Opens one transaction that the next batches join as savepoints (``SQLiteDatabase/transaction(_:)``
    /// nests): every commit rewrites each page the batch touched, and the random keys of the id indexes
    /// touch most of an index's pages, so a commit per batch wrote the indexes over and over.
    public func beginWriteGroup() throws {
        if database.isAutocommit { try database.execute("BEGIN IMMEDIATE") }
    }

    public func commitWriteGroup() throws {
        if !database.isAutocommit { try database.execute("COMMIT") }
    }

    /// Takes the single-instance lock: `flock` on `<store>.lock` beside the file.
    public func acquireRunLock() throws -> AnyObject {
        try RunLock(path: database.path + ".lock")
    }
}
