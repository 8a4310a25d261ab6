import Foundation

/// Runs full-mode rule queries (and the report's own whole-store queries) ahead, on read-only connections of
/// their own, on as many threads as there are cores (at most ``maxReaders``).
///
/// SQLite runs one statement on one core; the rule stage's queries are independent reads of data the
/// ingest already committed, so they can run side by side. The run's own connection holds the rule stage's
/// write transaction (rewinds, scopes, findings) meanwhile: in WAL mode readers see the committed data and
/// never wait for it. Only queries that read committed tables alone may come here: scoped rules only when
/// the pipeline committed their scope before the rule stage (``RuleEngine/prefetchQueries(of:now:since:readers:extraJobs:scopeCommitted:)``);
/// otherwise the scope lives in the open transaction, and they query on the run's connection.
///
/// The longest queries (by their time in the latest run) are started first; ``take(_:)`` waits for one.
final class RuleQueryPrefetch: @unchecked Sendable {
    /// One query to run: its key (the rule's id), its SQL and its bound parameters.
    struct Job: Sendable {
        var key: String
        var sql: String
        var parameters: [String: SQLValue]
    }

    /// A finished query: its rows or its error, and its time in milliseconds.
    struct Outcome: Sendable {
        var rows: Result<ResultRows, PrefetchError>
        var millis: Double
    }

    /// A query's failure, as text (the error the run's connection would have thrown).
    struct PrefetchError: Error, Sendable, CustomStringConvertible {
        var description: String
        /// The store file turned out damaged (the query's ``SQLiteError/isDamagedStore``): an I/O failure of
        /// the store, not a bug.
        var damagedStore = false
    }

    static let maxReaders = 4

    private let condition = NSCondition()
    private var pending: [Job]
    private var outcomes: [String: Outcome] = [:]
    private var running: Set<String> = []
    private var cancelled = false
    private var readers: Int
    private let path: String

    /// Starts `jobs` on `readers` threads over the SQLite file at `path`.
    init(path: String, jobs: [Job], readers: Int) {
        self.path = path
        // Threads pop from the end: the longest first.
        pending = jobs.reversed()
        self.readers = max(1, min(readers, jobs.count))
        for _ in 0..<self.readers {
            let thread = Thread { [self] in work() }
            thread.name = "iapguard-rule-reader"
            thread.start()
        }
    }

    /// Waits for the query of `ruleID` and hands its outcome over (nil when it was never given, or was
    /// given back because no reader could open the store).
    func take(_ ruleID: String) -> Outcome? {
        condition.lock()
        defer { condition.unlock() }
        while outcomes[ruleID] == nil {
            guard running.contains(ruleID) || pending.contains(where: { $0.key == ruleID }) else { return nil }
            condition.wait()
        }
        return outcomes.removeValue(forKey: ruleID)
    }

    /// Stops starting queries (those running finish on their own).
    func cancel() {
        condition.lock()
        cancelled = true
        pending = []
        condition.broadcast()
        condition.unlock()
    }

    /// Each reader's page cache, in KiB.
    static let readerCacheKiB = 4096

    private func work() {
        let store: SQLiteStore
        do {
            store = try SQLiteStore(path: path, readOnly: true)
            // A small page cache, which is also the size of the sorter's runs: the rules group and sort millions
            // of rows, and runs that stay in the CPU's caches sort faster. At 1M a full evaluation of every
            // rule (`iapguard run` over a window already evaluated) took 7.2–7.5 s with 4 MiB, 7.5–7.8 s with
            // 16 MiB and 8.0–8.2 s with 64 MiB, and its peak RSS fell from 375–396 MiB to 208–222 MiB.
            try store.database.execute("PRAGMA cache_size = -\(Self.readerCacheKiB)")
        } catch {
            readerFailed()
            return
        }
        while let job = next() {
            let clock = ContinuousClock()
            let start = clock.now
            var rows = ResultRows()
            let result: Result<ResultRows, PrefetchError>
            do {
                try store.query(job.sql, parameters: job.parameters) { columns, values in
                    rows.append(columns: columns, values: values)
                }
                result = .success(rows)
            } catch {
                result = .failure(
                    PrefetchError(
                        description: "\(error)", damagedStore: (error as? SQLiteError)?.isDamagedStore ?? false))
            }
            let elapsed = start.duration(to: clock.now)
            let millis = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
            finish(job.key, Outcome(rows: result, millis: millis))
        }
    }

    private func next() -> Job? {
        condition.lock()
        defer { condition.unlock() }
        guard !cancelled, let job = pending.popLast() else { return nil }
        running.insert(job.key)
        return job
    }

    private func finish(_ ruleID: String, _ outcome: Outcome) {
        condition.lock()
        running.remove(ruleID)
        outcomes[ruleID] = outcome
        condition.broadcast()
        condition.unlock()
    }

    /// A reader that cannot open leaves its share to the others; when none is left, the queries not started
    /// go back to the caller (``take(_:)`` returns nil for them and the rule stage runs them itself).
    private func readerFailed() {
        condition.lock()
        readers -= 1
        if readers == 0 { pending = [] }
        condition.broadcast()
        condition.unlock()
    }
}
