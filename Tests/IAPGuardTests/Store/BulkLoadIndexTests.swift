import Foundation
import Testing

@testable import IAPGuard

/// A first load into an empty SQLite store writes its rows without the big tables' secondary indexes and
/// builds them once after; the store ends with exactly the schema the migrations create.
@Suite struct BulkLoadIndexTests {
    static func schema(_ store: SQLiteStore) throws -> [String] {
        try store.database.query(
            "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY type, name"
        ).map { $0.map(\.description).joined(separator: "|") }
    }

    /// A store path in the test scratch folder, not yet created.
    static func scratchStore(_ prefix: String) -> String {
        TestScratch.root.appendingPathComponent("\(prefix)-\(UUID().uuidString).sqlite").path
    }

    /// Removes a scratch store with every file SQLite and iapguard keep beside it.
    static func removeStore(_ path: String) {
        for suffix in ["", "-wal", "-shm", ".first-load", ".lock"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }

    static func secondaryIndexes(_ store: SQLiteStore, on table: String) throws -> Int {
        Int(
            try store.database.scalar(
                "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name = ?",
                [.text(table)])?.integerValue ?? -1)
    }

    @Test func anEmptyStoreDefersTheBigTablesIndexesAndBuildsTheSameOnesAfterTheLoad() throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        let migrated = try Self.schema(store)
        #expect(try store.beginBulkLoad())
        for table in SQLiteStore.bulkLoadTables {
            #expect(try Self.secondaryIndexes(store, on: table) == 0, "\(table)")
        }
        // Notifications keep theirs: the write path looks refund reversals up by transaction id there.
        #expect(try Self.secondaryIndexes(store, on: "notification") > 0)
        let counts = try store.write(PostgresStoreTests.batches()[0], runID: 1)
        #expect(counts.inserted > 0)
        try store.finishBulkLoad()
        #expect(try Self.schema(store) == migrated)
        #expect(try store.database.scalar("SELECT COUNT(*) FROM deferred_index") == .integer(0))
        // Loaded now: the next run keeps its indexes up to date row by row.
        #expect(try !store.beginBulkLoad())
        #expect(try Self.schema(store) == migrated)
    }

    /// A table no later source writes is indexed while the load goes on: its indexes are built, the other
    /// tables' stay deferred, rows written to it afterwards are in its indexes, and the end of the load
    /// builds the rest into the schema the migrations create.
    @Test func indexesBuiltEarlyForSomeTablesLeaveTheOthersDeferredAndTheLoadEndsWithTheSameSchema() throws {
        let path = Self.scratchStore("early-index")
        defer { Self.removeStore(path) }
        let store = try SQLiteStore(path: path)
        try store.migrate()
        let migrated = try Self.schema(store)
        #expect(try store.beginBulkLoad())
        let batches = PostgresStoreTests.batches()
        var orders = IngestBatch()
        orders.orders = batches[0].orders
        #expect(!orders.orders.isEmpty)
        _ = try store.write(orders, runID: 1)
        try store.buildDeferredIndexes(on: ["backend_order"])
        #expect(try Self.secondaryIndexes(store, on: "backend_order") > 0)
        for table in SQLiteStore.bulkLoadTables where table != "backend_order" {
            #expect(try Self.secondaryIndexes(store, on: table) == 0, "\(table)")
        }
        // Inside an open write group it builds nothing: an index build commits on its own.
        try store.beginWriteGroup()
        try store.buildDeferredIndexes(on: ["credit"])
        try store.commitWriteGroup()
        #expect(try Self.secondaryIndexes(store, on: "credit") == 0)
        // Written after its indexes were built: the rows are in them.
        _ = try store.write(batches[1], runID: 1)
        let byIndex = try store.database.scalar(
            "SELECT COUNT(*) FROM backend_order INDEXED BY backend_order_user WHERE user_id > ''")
        let byScan = try store.database.scalar("SELECT COUNT(*) FROM backend_order NOT INDEXED WHERE user_id > ''")
        #expect(byIndex == byScan)
        #expect(byIndex != .integer(0))
        try store.finishBulkLoad()
        #expect(try Self.schema(store) == migrated)
        #expect(try store.database.scalar("SELECT COUNT(*) FROM deferred_index") == .integer(0))
        #expect(try store.database.scalar("PRAGMA integrity_check") == .text("ok"))
    }

    static func pragma(_ store: SQLiteStore, _ name: String) throws -> Int64? {
        try store.database.scalar("PRAGMA \(name)")?.integerValue
    }

    @Test func deferredIndexesAreBuiltWithASmallCacheAndTheSorterOnEveryCoreThenTheConnectionIsPutBack() throws {
        let path = Self.scratchStore("index-sorter")
        defer { Self.removeStore(path) }
        let store = try SQLiteStore(path: path)
        try store.migrate()
        let cores = Int64(ProcessInfo.processInfo.activeProcessorCount)
        let before = (cache: try Self.pragma(store, "cache_size"), threads: try Self.pragma(store, "threads"))
        #expect(before.cache == -65536)
        let during = try store.withIndexBuildSorter {
            (cache: try Self.pragma(store, "cache_size"), threads: try Self.pragma(store, "threads"))
        }
        #expect(during.cache == -Int64(SQLiteStore.indexBuildCacheKiB))
        #expect(during.threads == (cores > 1 ? cores : before.threads))
        #expect(try Self.pragma(store, "cache_size") == before.cache)
        #expect(try Self.pragma(store, "threads") == before.threads)
        // Put back when the build fails too.
        struct Failed: Error {}
        #expect(throws: Failed.self) { try store.withIndexBuildSorter { throw Failed() } }
        #expect(try Self.pragma(store, "cache_size") == before.cache)
        #expect(try Self.pragma(store, "threads") == before.threads)
        // A load whose user index (about 9 MB of keys) the sorter cuts into several runs and merges builds
        // indexes that answer like a table scan.
        #expect(try store.beginBulkLoad())
        try store.database.execute(
            """
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 150000)
            INSERT INTO credit (credit_id, user_id, transaction_id, product_id, units, credited_at, source_name,
                                source_ref, row_hash, first_run_id, last_run_id)
            SELECT printf('c-%06d', i), printf('u-%08x-%040d', (i * 2654435761) % 4294967296, i),
                   printf('t-%06d', i), 'p', 1, i, 'credits', 'credits.jsonl:' || i, '', 1, 1 FROM n
            """)
        try store.finishBulkLoad()
        #expect(try store.database.scalar("PRAGMA integrity_check") == .text("ok"))
        let byIndex = try store.database.scalar(
            "SELECT COUNT(*) FROM credit INDEXED BY credit_user WHERE user_id > 'u-8'")
        let byScan = try store.database.scalar("SELECT COUNT(*) FROM credit NOT INDEXED WHERE user_id > 'u-8'")
        #expect(byIndex == byScan)
        #expect(byIndex != .integer(0))
    }

    @Test func aStoreWithRowsKeepsItsIndexes() throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        var batch = IngestBatch()
        batch.orders = PostgresStoreTests.batches()[0].orders
        #expect(!batch.orders.isEmpty)
        _ = try store.write(batch, runID: 1)
        let before = try Self.schema(store)
        #expect(try !store.beginBulkLoad())
        #expect(try Self.schema(store) == before)
    }

    static func journalMode(_ store: SQLiteStore) throws -> String? {
        try store.database.query("PRAGMA journal_mode").first?.first?.textValue?.lowercased()
    }

    @Test func aLoadStoppedWithItsIndexesDeferredGoesOnDeferredAndTheNextFinishBuildsThem() throws {
        let path = BulkLoadIndexTests.scratchStore("bulk")
        defer { BulkLoadIndexTests.removeStore(path) }
        let migrated: [String]
        do {
            let first = try SQLiteStore(path: path)
            try first.migrate()
            migrated = try Self.schema(first)
            #expect(try first.beginBulkLoad())
            _ = try first.write(PostgresStoreTests.batches()[0], runID: 1)
            // Stopped here (a signal between batches): rows written and made safe, indexes not built.
            try first.secureBulkLoad()
        }
        let second = try SQLiteStore(path: path)
        try second.migrate()
        // The store has rows now, but the load that began on an empty store is not finished.
        #expect(try second.beginBulkLoad())
        _ = try second.write(PostgresStoreTests.batches()[1], runID: 1)
        try second.finishBulkLoad()
        #expect(try Self.schema(second) == migrated)
        #expect(try !second.beginBulkLoad())
    }

    @Test func aFreshStoresFirstLoadWritesWithoutAJournalUntilItIsSecured() throws {
        let path = BulkLoadIndexTests.scratchStore("nojournal")
        defer { BulkLoadIndexTests.removeStore(path) }
        let store = try SQLiteStore(path: path)
        try store.migrate()
        let migrated = try Self.schema(store)
        #expect(try Self.journalMode(store) == "wal")
        #expect(try store.beginBulkLoad())
        #expect(store.isUnjournaled)
        #expect(try Self.journalMode(store) == "off")
        #expect(FileManager.default.fileExists(atPath: path + ".first-load"))
        // Nobody else may open the store meanwhile: it is refused with a message naming the marker.
        #expect(throws: StoreError.self) { try SQLiteStore(path: path, readOnly: true) }
        _ = try store.write(PostgresStoreTests.batches()[0], runID: 1)
        try store.finishBulkLoad()
        #expect(!store.isUnjournaled)
        #expect(try Self.journalMode(store) == "wal")
        #expect(!FileManager.default.fileExists(atPath: path + ".first-load"))
        #expect(try Self.schema(store) == migrated)
        // Other connections read it again, concurrently with the writer.
        let reader = try SQLiteStore(path: path, readOnly: true)
        #expect(try reader.database.scalar("SELECT COUNT(*) FROM apple_sighting")?.integerValue ?? 0 > 0)
    }

    @Test func aFirstLoadKilledWhileUnjournaledIsDeletedByTheNextRunAndRefusedByReaders() throws {
        let path = BulkLoadIndexTests.scratchStore("killed")
        defer { BulkLoadIndexTests.removeStore(path) }
        do {
            let store = try SQLiteStore(path: path)
            try store.migrate()
            #expect(try store.beginBulkLoad())
            _ = try store.write(PostgresStoreTests.batches()[0], runID: 1)
            // Killed here: the marker stays.
        }
        #expect(FileManager.default.fileExists(atPath: path + ".first-load"))
        do {
            _ = try SQLiteStore(path: path, readOnly: true)
            Issue.record("a reader opened a store whose first load was killed")
        } catch let error as StoreError {
            #expect(error.message.contains("first load"))
            #expect(error.message.contains(".first-load"))
        }
        let (store, lock, discarded) = try StoreLocation.sqlite(path: path).openForRun()
        defer { withExtendedLifetime(lock) {} }
        #expect(discarded)
        #expect(!FileManager.default.fileExists(atPath: path + ".first-load"))
        #expect(try store.rows("SELECT COUNT(*) FROM apple_sighting") == [[.integer(0)]])
        #expect(try store.rows("SELECT COUNT(*) FROM backend_order") == [[.integer(0)]])
    }

    @Test func aStoreWithAnEarlierRunsAccountsKeepsItsJournalDuringALoad() throws {
        let path = BulkLoadIndexTests.scratchStore("journaled")
        defer { BulkLoadIndexTests.removeStore(path) }
        let store = try SQLiteStore(path: path)
        try store.migrate()
        var accounts = IngestBatch()
        var account = UserAccount(userID: "u-earlier")
        account.appAccountToken = "0f7a2c3e-0000-4000-8000-000000000001"
        accounts.users = [(user: account, sourceName: "users", sourceRef: "users.csv:2")]
        _ = try store.write(accounts, runID: 1)
        // Only the big tables are empty: indexes are deferred, but the accounts must survive a kill.
        #expect(try store.beginBulkLoad())
        #expect(!store.isUnjournaled)
        #expect(try Self.journalMode(store) == "wal")
        #expect(!FileManager.default.fileExists(atPath: path + ".first-load"))
        try store.finishBulkLoad()
    }

    @Test func theWritePathNeverScansABigTableWhileItsIndexesAreDeferred() throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        #expect(try store.beginBulkLoad())
        // Every statement the write path runs per record, as SQLite would plan it with the indexes dropped.
        let statements = [
            StoreRecords.selectCanonicalSQL, StoreRecords.selectRevocationSQL, StoreRecords.latestReversalSQL,
            StoreRecords.selectNotificationSQL, StoreRecords.orderTable.selectSQL, StoreRecords.creditTable.selectSQL,
        ]
        for sql in statements {
            let plan = try store.database.query("EXPLAIN QUERY PLAN " + sql, [.text("k")])
                .compactMap { $0.last?.textValue }
            #expect(!plan.contains { $0.hasPrefix("SCAN") }, "\(sql): \(plan)")
        }
    }
}

/// Batches written in a write group are committed together, each still atomic on its own.
@Suite struct WriteGroupTests {
    @Test func batchesOfAWriteGroupBecomeVisibleTogetherAtItsCommit() throws {
        let path = BulkLoadIndexTests.scratchStore("group")
        defer { BulkLoadIndexTests.removeStore(path) }
        let store = try SQLiteStore(path: path)
        try store.migrate()
        let reader = try SQLiteStore(path: path, readOnly: true)
        func orders() throws -> Int64 {
            try reader.database.scalar("SELECT COUNT(*) FROM backend_order")?.integerValue ?? -1
        }
        var first = IngestBatch()
        first.orders = Array(PostgresStoreTests.batches()[0].orders.prefix(1))
        var second = IngestBatch()
        second.orders = Array(PostgresStoreTests.batches()[1].orders.prefix(1))
        #expect(!first.orders.isEmpty && !second.orders.isEmpty)
        try store.beginWriteGroup()
        _ = try store.write(first, runID: 1)
        _ = try store.write(second, runID: 1)
        #expect(try orders() == 0)
        try store.commitWriteGroup()
        #expect(try orders() == 2)
        // Outside a group each batch commits on its own.
        var third = first
        third.orders[0].order.orderID = "o-write-group-3"
        _ = try store.write(third, runID: 1)
        #expect(try orders() == 3)
    }

    @Test func aBatchThatFailsToWriteRollsItsWholeWriteGroupBack() throws {
        let path = BulkLoadIndexTests.scratchStore("group-failure")
        defer { BulkLoadIndexTests.removeStore(path) }
        let store = try SQLiteStore(path: path)
        try store.migrate()
        // A store-side failure in the middle of a batch: the batch's first row is written, its second not.
        try store.database.execute(
            """
            CREATE TRIGGER refuse_order BEFORE INSERT ON backend_order WHEN NEW.order_id = 'o-refused'
            BEGIN SELECT RAISE(ABORT, 'refused'); END
            """)
        func orders() throws -> Int64 {
            try store.database.scalar("SELECT COUNT(*) FROM backend_order")?.integerValue ?? -1
        }
        let template = PostgresStoreTests.batches()[0].orders[0]
        func batch(_ ids: [String]) -> IngestBatch {
            var batch = IngestBatch()
            batch.orders = ids.map { id in
                var row = template
                row.order.orderID = id
                return row
            }
            return batch
        }
        try store.beginWriteGroup()
        _ = try store.write(batch(["o-1"]), runID: 1)
        #expect(throws: SQLiteError.self) { try store.write(batch(["o-2", "o-refused"]), runID: 1) }
        // Nothing of the group stays, not even the failed batch's first row; the connection is usable.
        try store.commitWriteGroup()
        #expect(store.database.isAutocommit)
        #expect(try orders() == 0)
        try store.beginWriteGroup()
        _ = try store.write(batch(["o-1", "o-2"]), runID: 1)
        try store.commitWriteGroup()
        #expect(try orders() == 2)
    }
}
