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
        if path != ":memory:", FirstLoadMarker(storePath: path).exists {
            throw StoreError(
                message: "store \(path): its first load is running, or was killed or failed; "
                    + "the next `iapguard run` loads it again (\(FirstLoadMarker(storePath: path).path))")
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

    /// Writes a batch through ``SQLiteBatchWriter``: insert first, read and compare only when the key exists.
    /// Same rows, `change_log` entries and counts as ``writeRowByRow(_:runID:)``. Outside a write group the
    /// batch is its own transaction. Inside one it joins the group's transaction without a savepoint (a
    /// savepoint copies every page the batch touches to a statement journal in a temporary file first: about
    /// 140k page writes in a 1M store's daily run), and a failure rolls the whole group back
    /// (``beginWriteGroup()``).
    public func write(_ batch: IngestBatch, runID: Int64) throws -> WriteCounts {
        let writer = try batchWriter ?? SQLiteBatchWriter(database: database)
        batchWriter = writer
        guard !database.isAutocommit else {
            return try database.transaction { try writer.write(batch, runID: runID, store: self) }
        }
        do {
            return try writer.write(batch, runID: runID, store: self)
        } catch {
            try? database.execute("ROLLBACK")
            throw error
        }
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
    ///
    /// When the store holds nothing but this first run (one run, no notifications, accounts or findings),
    /// the load also writes without a journal until ``secureBulkLoad()``: in WAL mode every page is written
    /// twice (to the WAL, then to the file), and a page a commit touched again is appended again. A
    /// ``FirstLoadMarker`` makes that safe: a run killed meanwhile leaves the marker, and the next run
    /// deletes the store and loads again from the inputs.
    public func beginBulkLoad() throws -> Bool {
        let (deferred, fresh) = try deferIndexes()
        if deferred, fresh, database.path != ":memory:" { try writeWithoutJournal() }
        return deferred
    }

    /// The file other connections can read this store's committed data from, side by side with this one
    /// (WAL mode): nil for an in-memory store and while a first load writes without a journal.
    public var readerPath: String? {
        database.path == ":memory:" || isUnjournaled ? nil : database.path
    }

    /// Whether the load writes without a journal now (``beginBulkLoad()``).
    public private(set) var isUnjournaled = false

    /// Ends an unjournaled load: back to WAL with the usual locking and syncing, the file synced, then the
    /// marker removed. Whatever the load wrote is durable afterwards, indexes built or still deferred.
    public func secureBulkLoad() throws {
        guard isUnjournaled else { return }
        try database.execute("PRAGMA locking_mode = NORMAL")
        // The exclusive lock is released at the next access; WAL entered under it would stay exclusive.
        _ = try database.query("SELECT COUNT(*) FROM sqlite_master")
        let mode = try database.query("PRAGMA journal_mode = WAL").first?.first?.textValue
        guard mode?.lowercased() == "wal" else {
            throw StoreError(message: "store \(database.path): cannot return to WAL mode after the first load")
        }
        try database.execute("PRAGMA synchronous = NORMAL")
        try FirstLoadMarker(storePath: database.path).remove()
        isUnjournaled = false
    }

    private func writeWithoutJournal() throws {
        let marker = FirstLoadMarker(storePath: database.path)
        try marker.create()
        let mode = try database.query("PRAGMA journal_mode = OFF").first?.first?.textValue
        guard mode?.lowercased() == "off" else {
            try marker.remove()
            return
        }
        try database.execute("PRAGMA synchronous = OFF")
        // No other connection may read pages that are being rewritten in place.
        try database.execute("PRAGMA locking_mode = EXCLUSIVE")
        isUnjournaled = true
    }

    /// Defers the big tables' secondary indexes when they are all empty (or were left deferred). Returns
    /// whether indexes are deferred, and whether the store holds nothing but this first run.
    private func deferIndexes() throws -> (deferred: Bool, fresh: Bool) {
        try database.transaction {
            if try !database.query("SELECT 1 FROM deferred_index LIMIT 1").isEmpty { return (true, false) }
            for table in Self.bulkLoadTables where try !database.query("SELECT 1 FROM \(table) LIMIT 1").isEmpty {
                return (false, false)
            }
            let fresh =
                try database.scalar(
                    """
                    SELECT (SELECT COUNT(*) FROM run) <= 1 AND NOT EXISTS (SELECT 1 FROM notification)
                        AND NOT EXISTS (SELECT 1 FROM user_account) AND NOT EXISTS (SELECT 1 FROM finding)
                    """)?.integerValue == 1
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
            return (deferred > 0, fresh)
        }
    }

    /// Builds each deferred index and forgets its definition, one index per transaction, so that a run
    /// killed here leaves the rest for the next run to build; then ends an unjournaled load
    /// (``secureBulkLoad()``).
    public func finishBulkLoad() throws {
        try buildDeferred(try database.query("SELECT name, definition FROM deferred_index ORDER BY name"))
        try secureBulkLoad()
    }

    /// Builds the deferred indexes of `tables` (one per transaction, as ``finishBulkLoad()``), leaving the
    /// others deferred and the load unjournaled if it is.
    public func buildDeferredIndexes(on tables: Set<String>) throws {
        guard !tables.isEmpty, database.isAutocommit else { return }
        let placeholders = tables.map { _ in "?" }.joined(separator: ", ")
        try buildDeferred(
            try database.query(
                "SELECT name, definition FROM deferred_index WHERE table_name IN (\(placeholders)) ORDER BY name",
                tables.sorted().map { .text($0) }))
    }

    /// Builds each index of `rows` (name, definition) and forgets its definition, in one transaction each.
    private func buildDeferred(_ rows: [[SQLValue]]) throws {
        guard !rows.isEmpty else { return }
        try withIndexBuildSorter {
            for row in rows {
                guard let name = row[0].textValue, let definition = row[1].textValue else { continue }
                try database.transaction {
                    try database.execute(definition)
                    try database.run("DELETE FROM deferred_index WHERE name = ?", [.text(name)])
                }
            }
        }
    }

    /// The page cache, in KiB, while deferred indexes are built (``withIndexBuildSorter(_:)``).
    static let indexBuildCacheKiB = 4096

    /// Runs `body` with SQLite's sorter on every core and a small page cache, then puts both back.
    ///
    /// `CREATE INDEX` sorts the table's keys in runs the size of the page cache and merges them. With the
    /// store's 64 MiB cache, most indexes were one or two runs sorted on one thread; with 4 MiB runs and
    /// `PRAGMA threads`, helper threads sort runs and merge while the statement goes on reading the table.
    /// The 1M store's 29 deferred indexes, built with the `sqlite3` module on a copy of the store: 10.8–12.0 s
    /// with the 64 MiB cache on one thread, 9.9 s with a 4 MiB cache, 8.0–8.6 s with 4 MiB and two threads
    /// (more threads than cores did not help). A full run's index stage went from 13.3–14.1 s to 9.8–10.1 s.
    func withIndexBuildSorter<T>(_ body: () throws -> T) throws -> T {
        let cache = try database.scalar("PRAGMA cache_size")?.integerValue ?? -65536
        let threads = try database.scalar("PRAGMA threads")?.integerValue ?? 0
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let result = Result {
            try database.execute("PRAGMA cache_size = -\(Self.indexBuildCacheKiB)")
            if cores > 1 { try database.execute("PRAGMA threads = \(cores)") }
            return try body()
        }
        let restored = Result {
            try database.execute("PRAGMA cache_size = \(cache)")
            try database.execute("PRAGMA threads = \(threads)")
        }
        let value = try result.get()
        try restored.get()
        return value
    }

    /// Opens one transaction that the next batches join (``write(_:runID:)``): every commit rewrites each
    /// page the batch touched, and the random keys of the id indexes touch most of an index's pages, so a
    /// commit per batch wrote the indexes over and over.
    public func beginWriteGroup() throws {
        if database.isAutocommit { try database.execute("BEGIN IMMEDIATE") }
    }

    public func commitWriteGroup() throws {
        if !database.isAutocommit { try database.execute("COMMIT") }
        checkpointer?.checkpointer.request()
    }

    /// The checkpointer of the ingest under way, if any (``beginIngestCheckpoints()``), and the automatic
    /// checkpoint interval it replaces.
    private var checkpointer: (checkpointer: WALCheckpointer, autocheckpoint: Int64)?

    /// Hands the ingest's WAL checkpoints to a ``WALCheckpointer`` (a second connection on another thread)
    /// and turns this connection's automatic checkpoint off: pages are copied into the file while the
    /// writer goes on. Nothing on one core, in memory, or while a first load writes without a journal.
    public func beginIngestCheckpoints() throws {
        guard checkpointer == nil, !isUnjournaled, database.path != ":memory:",
            ProcessInfo.processInfo.activeProcessorCount > 1
        else { return }
        let interval = try database.scalar("PRAGMA wal_autocheckpoint")?.integerValue ?? 1000
        let started = try WALCheckpointer(path: database.path)
        do {
            try database.execute("PRAGMA wal_autocheckpoint = 0")
        } catch {
            _ = try? started.finish()
            throw error
        }
        checkpointer = (started, interval)
    }

    public func requestIngestCheckpoint() {
        checkpointer?.checkpointer.request()
    }

    /// Waits for a last checkpoint of what the ingest wrote, stops the checkpointer and turns the automatic
    /// checkpoint back on. Readers that start after a complete checkpoint read the file, not the WAL.
    public func endIngestCheckpoints() throws {
        guard let (running, interval) = checkpointer else { return }
        checkpointer = nil
        let restored = Result { try database.execute("PRAGMA wal_autocheckpoint = \(interval)") }
        try running.finish()
        try restored.get()
    }

    /// Takes the single-instance lock: `flock` on `<store>.lock` beside the file.
    public func acquireRunLock() throws -> AnyObject {
        try RunLock(path: database.path + ".lock")
    }
}
