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

    /// Takes the single-instance lock: `flock` on `<store>.lock` beside the file.
    public func acquireRunLock() throws -> AnyObject {
        try RunLock(path: database.path + ".lock")
    }
}
