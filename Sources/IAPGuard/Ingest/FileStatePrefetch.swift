import Dispatch
import Foundation

/// Hashes the input files a run will have to hash, ahead of their ingest and on all cores, so a daily run
/// does not hash its grown files one after the other on the thread that then writes the store.
///
/// A grown file's old part is hashed on every run to prove that it was only appended to (at 10M purchases
/// that is 17 GB of input). Sources are ingested in order, so without this the first source's hash, its
/// appended records, the second source's hash, … all run one after another. Here the hashes run on
/// background threads (largest file first) while the ingest goes on; the ingest takes each result when it
/// reaches the file, or computes it itself when there is none.
///
/// A result is used only if the file's `stat` identity is still the one it had when it was hashed (so a
/// file rewritten in between is hashed again), which keeps the window in which a change can slip between
/// hashing and reading as short as without the prefetch.
final class FileStatePrefetch: @unchecked Sendable {
    /// A file's state as `SourceIngestor.fileState(of:prefixSize:)` computed it, with what it was computed for.
    struct Result: Sendable {
        var state: FileState
        var prefix: SourceIngestor.Prefix?
        var prefixSize: Int64?
        /// The file's identity before it was read; nil if it could not be taken.
        var identity: FileIdentity?
    }

    /// One file to hash: its key (source name and path), its size for ordering, and the work.
    struct Job: Sendable {
        var key: String
        var size: Int64
        var work: @Sendable () throws -> Result
    }

    private let lock = NSCondition()
    private var pending: [Job]
    private var done: [String: Swift.Result<Result, any Error>] = [:]
    private var running: Set<String> = []
    private var cancelled = false

    /// Starts hashing `jobs` on `threads` background threads, largest file first.
    init(jobs: [Job], threads: Int) {
        pending = jobs.sorted { $0.size > $1.size }
        for _ in 0..<max(1, min(threads, jobs.count)) {
            let thread = Thread { [self] in work() }
            thread.start()
        }
    }

    deinit { cancel() }

    /// The key of `path` in `source`.
    static func key(source: String, path: String) -> String { source + "\u{0}" + path }

    /// Stops starting new jobs (running ones finish; their results are not waited for).
    func cancel() {
        lock.lock()
        cancelled = true
        pending.removeAll()
        lock.broadcast()
        lock.unlock()
    }

    /// The result for `key`, waiting while it is being computed; nil when it was never planned, was
    /// cancelled before it started, or failed (the caller then computes it, and meets the error itself).
    func take(_ key: String) -> Result? {
        lock.lock()
        defer { lock.unlock() }
        while true {
            if let result = done.removeValue(forKey: key) { return try? result.get() }
            if running.contains(key) {
                lock.wait()
                continue
            }
            // Not started yet: take it off the queue and let the caller compute it now.
            pending.removeAll { $0.key == key }
            return nil
        }
    }

    /// Waits until no job is queued or running (tests).
    func waitUntilIdle() {
        lock.lock()
        while !pending.isEmpty || !running.isEmpty { lock.wait() }
        lock.unlock()
    }

    private func work() {
        while true {
            lock.lock()
            guard !cancelled, !pending.isEmpty else {
                lock.unlock()
                return
            }
            let job = pending.removeFirst()
            running.insert(job.key)
            lock.unlock()
            let result = Swift.Result { try job.work() }
            lock.lock()
            running.remove(job.key)
            if !cancelled { done[job.key] = result }
            lock.broadcast()
            lock.unlock()
        }
    }
}
