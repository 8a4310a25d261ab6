import CSQLite
import Foundation

/// Runs the WAL checkpoints of an ingest on a connection and thread of its own.
///
/// In WAL mode every committed page is written twice: appended to the WAL at the commit, then copied into
/// the database file by a checkpoint. SQLite's automatic checkpoint runs that copy (and its syncs) on the
/// writer right after a commit, so the writer stalls while the other core idles. With the writer's
/// automatic checkpoint off, this checkpointer copies committed pages while the writer goes on with the
/// next write group. A `PASSIVE` checkpoint never blocks the writer or readers, and never waits for them.
///
/// The WAL restarts from its beginning only when a write transaction begins after every frame was copied.
/// A checkpointer one group behind never lets that happen, so once the WAL holds ``maxFrames`` frames the
/// writer waits for a checkpoint to catch up at its next commit, which bounds the WAL.
final class WALCheckpointer: @unchecked Sendable {
    /// The outcome of the last checkpoint: frames in the WAL and frames copied into the database.
    struct Progress: Sendable, Equatable {
        var logFrames: Int32 = 0
        var copiedFrames: Int32 = 0
    }

    /// WAL frames (pages) past which a commit waits for the checkpointer: 256 MiB of 4 KiB pages.
    let maxFrames: Int32

    private let database: SQLiteDatabase
    private let condition = NSCondition()
    private var requested = 0
    private var completed = 0
    private var stopping = false
    private var finished = false
    private var progress = Progress()
    private var failure: (any Error)?

    /// Opens a second connection to the WAL-mode store at `path` and starts the checkpoint thread.
    init(path: String, maxFrames: Int32 = 65_536) throws {
        self.maxFrames = maxFrames
        database = try SQLiteDatabase(path: path)
        try database.execute("PRAGMA synchronous = NORMAL")
        // A connection learns that the file is in WAL mode at its first read; until then it cannot checkpoint.
        guard try database.query("PRAGMA journal_mode").first?.first?.textValue?.lowercased() == "wal" else {
            throw StoreError(message: "store \(path): not in WAL mode, no checkpoint to run")
        }
        let thread = Thread { [self] in loop() }
        thread.name = "iapguard-checkpoint"
        thread.start()
    }

    /// Asks for a checkpoint of everything committed so far. Returns nil at once, unless the WAL has grown
    /// past ``maxFrames``: then it returns that checkpoint's progress once it is done.
    @discardableResult
    func request() -> Progress? {
        condition.lock()
        defer { condition.unlock() }
        requested += 1
        condition.broadcast()
        guard progress.logFrames >= maxFrames else { return nil }
        let target = requested
        while completed < target, !finished { condition.wait() }
        return progress
    }

    /// Runs a last checkpoint, waits for it and stops the thread. Rethrows the first failure of any
    /// checkpoint; returns the last checkpoint's progress.
    @discardableResult
    func finish() throws -> Progress {
        condition.lock()
        defer { condition.unlock() }
        requested += 1
        stopping = true
        condition.broadcast()
        while !finished { condition.wait() }
        if let failure { throw failure }
        return progress
    }

    private func loop() {
        condition.lock()
        while true {
            while completed == requested, !stopping { condition.wait() }
            if completed == requested { break }
            let target = requested
            condition.unlock()
            let outcome = Result { try checkpoint() }
            condition.lock()
            completed = target
            switch outcome {
            case .success(let value): progress = value
            case .failure(let error): failure = failure ?? error
            }
            condition.broadcast()
        }
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// One `PASSIVE` checkpoint. `SQLITE_BUSY` (another checkpoint is running) is no failure.
    private func checkpoint() throws -> Progress {
        var log: Int32 = 0
        var copied: Int32 = 0
        let rc = sqlite3_wal_checkpoint_v2(database.handle, nil, SQLITE_CHECKPOINT_PASSIVE, &log, &copied)
        guard rc == SQLITE_OK || rc == SQLITE_BUSY else {
            throw SQLiteError(
                code: rc, message: String(cString: sqlite3_errmsg(database.handle)), sql: "wal_checkpoint(PASSIVE)")
        }
        return Progress(logFrames: log, copiedFrames: copied)
    }
}
