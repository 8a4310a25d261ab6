import Foundation
import Testing

@testable import IAPGuard

/// An ingest's WAL checkpoints run on a second connection (``WALCheckpointer``) while the writer goes on;
/// when the ingest ends, everything it committed is in the database file and the automatic checkpoint is
/// back on.
@Suite struct WALCheckpointerTests {
    /// A scratch store with an empty `payload` table, its ingest checkpoints begun; `body` gets the store and
    /// a function that copies its database file without the WAL and counts the payload rows in the copy.
    static func withPayloadStore(_ name: String, _ body: (SQLiteStore, () throws -> Int64?) throws -> Void) throws {
        let path = BulkLoadIndexTests.scratchStore(name)
        let copy = path + "-copy.sqlite"
        defer {
            BulkLoadIndexTests.removeStore(path)
            BulkLoadIndexTests.removeStore(copy)
        }
        let store = try SQLiteStore(path: path)
        try store.database.execute("CREATE TABLE payload (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        try store.beginIngestCheckpoints()
        try body(store) {
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            return try SQLiteDatabase(path: copy, mode: .readOnly).scalar("SELECT COUNT(*) FROM payload")?.integerValue
        }
    }

    @Test func afterAnIngestTheDatabaseFileAloneHoldsEveryCommittedRow() throws {
        try Self.withPayloadStore("checkpoint") { store, rowsInTheFile in
            // One core has no other to checkpoint on: the writer keeps its automatic checkpoint.
            let moved = ProcessInfo.processInfo.activeProcessorCount > 1
            #expect(try store.database.scalar("PRAGMA wal_autocheckpoint")?.integerValue == (moved ? 0 : 1000))
            let body = String(repeating: "x", count: 2_000)
            for group in 0..<6 {
                try store.beginWriteGroup()
                for row in 0..<200 {
                    try store.database.run(
                        "INSERT INTO payload (id, body) VALUES (?, ?)",
                        [.integer(Int64(group * 200 + row)), .text(body)])
                }
                try store.commitWriteGroup()
            }
            try store.endIngestCheckpoints()
            #expect(try store.database.scalar("PRAGMA wal_autocheckpoint")?.integerValue == 1000)
            // The file without its WAL: what a checkpoint had not copied would be missing. (On one core the
            // automatic checkpoint, at 1,000 pages, has not run yet for these 600 or so.)
            guard moved else { return }
            #expect(try rowsInTheFile() == 1_200)
        }
    }

    /// The pipeline asks for the ingest's last checkpoint without waiting (``SQLiteStore/requestIngestCheckpoint()``)
    /// and builds the scope meanwhile: the checkpointer stays on until the rule stage ends it, and ending it
    /// copies what was written after the request too.
    @Test func aRequestedCheckpointLeavesTheCheckpointerOnUntilItIsEnded() throws {
        guard ProcessInfo.processInfo.activeProcessorCount > 1 else { return }
        try Self.withPayloadStore("checkpoint-request") { store, rowsInTheFile in
            let body = String(repeating: "y", count: 2_000)
            func write(_ ids: Range<Int>) throws {
                try store.database.transaction {
                    for id in ids {
                        try store.database.run(
                            "INSERT INTO payload (id, body) VALUES (?, ?)", [.integer(Int64(id)), .text(body)])
                    }
                }
            }
            try write(0..<400)
            store.requestIngestCheckpoint()
            #expect(try store.database.scalar("PRAGMA wal_autocheckpoint")?.integerValue == 0)
            try write(400..<600)
            try store.endIngestCheckpoints()
            #expect(try store.database.scalar("PRAGMA wal_autocheckpoint")?.integerValue == 1000)
            #expect(try rowsInTheFile() == 600)
        }
    }

    @Test func aWriterWaitsForTheCheckpointOnceTheWALPassesItsBound() throws {
        let path = BulkLoadIndexTests.scratchStore("checkpoint-bound")
        defer { BulkLoadIndexTests.removeStore(path) }
        let writer = try SQLiteDatabase(path: path)
        try writer.execute("PRAGMA journal_mode = WAL")
        try writer.execute("PRAGMA wal_autocheckpoint = 0")
        try writer.execute("CREATE TABLE payload (id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
        let checkpointer = try WALCheckpointer(path: path, maxFrames: 8)
        let body = String(repeating: "y", count: 3_000)
        var waited: [WALCheckpointer.Progress] = []
        // Until the checkpointer has seen the WAL past its bound once, and a few groups more.
        var group: Int64 = 0
        while waited.count < 3, group < 5_000 {
            try writer.transaction {
                for row in 0..<20 {
                    try writer.run(
                        "INSERT INTO payload (id, body) VALUES (?, ?)",
                        [.integer(group * 20 + Int64(row)), .text(body)])
                }
            }
            group += 1
            // Past the bound, `request` returns only once this group is copied: nothing is left behind.
            if let progress = checkpointer.request() { waited.append(progress) }
        }
        try checkpointer.finish()
        #expect(!waited.isEmpty)
        for progress in waited { #expect(progress.copiedFrames == progress.logFrames, "\(progress)") }
    }
}
