/// What the pipeline asks the store about its runs and contents, beyond writing records and findings: the
/// latest run (to resume an interrupted one) and the store-wide counts of a run's summary.
public protocol RunLedger {
    /// The latest run record's id and status, if any run was recorded.
    func latestRun() throws -> (runID: Int64, status: String)?
    /// Reopens run `runID` for a new attempt with `start`'s window and facts (status `running`).
    func restartRun(_ runID: Int64, _ start: RunStart) throws
    /// The counts every run's summary carries, each answered from an index.
    func storeCounts() throws -> StoreCounts
}

/// The store-wide counts of a run's summary.
public struct StoreCounts: Sendable, Hashable {
    /// Rows per counted view.
    public var rows: [String: Int64] = [:]
    /// Canonical transactions by verification state.
    public var verification: [String: Int64] = [:]
    /// Sightings that failed verification, by reason.
    public var failedSightings: [String: Int64] = [:]
    /// Records kept in the quarantine.
    public var quarantined: Int64 = 0

    /// The views counted in ``rows``.
    static let views = ["transactions", "sightings", "orders", "credits", "notifications", "refunds"]
    static let verificationSQL = "SELECT verification, COUNT(*) FROM transactions GROUP BY verification"
    static let failedSightingsSQL =
        "SELECT verification_reason, COUNT(*) FROM sightings WHERE verification = 'failed' GROUP BY verification_reason"
    /// Every statement ``RunLedger/storeCounts()`` runs on a SQL store (migration 6 indexes `verification`, so
    /// none reads a table: they run on every run, incremental ones included).
    static var statements: [String] {
        views.map { "SELECT COUNT(*) FROM \($0)" } + [verificationSQL, failedSightingsSQL]
    }
    /// Records kept in the quarantine (a count of the table).
    static let quarantinedSQL = "SELECT COUNT(*) FROM quarantine"

    /// The counts from `rows`, which answers each of ``statements`` and ``quarantinedSQL`` (the store's own
    /// connection, or a reader that ran them ahead).
    static func read(_ rows: (String) throws -> [[SQLValue]]) throws -> StoreCounts {
        var counts = StoreCounts()
        for view in views {
            counts.rows[view] = try rows("SELECT COUNT(*) FROM \(view)").first?.first?.integerValue ?? 0
        }
        for row in try rows(verificationSQL) {
            counts.verification[row[0].textValue ?? "?"] = row[1].integerValue ?? 0
        }
        for row in try rows(failedSightingsSQL) {
            counts.failedSightings[row[0].textValue ?? "?"] = row[1].integerValue ?? 0
        }
        counts.quarantined = try rows(quarantinedSQL).first?.first?.integerValue ?? 0
        return counts
    }
}

extension SQLBackedStore {
    public func latestRun() throws -> (runID: Int64, status: String)? {
        guard let row = try connection.query("SELECT run_id, status FROM run ORDER BY run_id DESC LIMIT 1", []).first,
            let runID = row[0].integerValue, let status = row[1].textValue
        else { return nil }
        return (runID, status)
    }

    public func restartRun(_ runID: Int64, _ start: RunStart) throws {
        _ = try connection.run(
            """
            UPDATE run SET status = 'running', started_at = ?, finished_at = NULL, window_since = ?,
                window_until = ?, config_hash = ?, tool_version = ?, summary_json = NULL
            WHERE run_id = ?
            """,
            [
                .integer(start.startedAt), .of(start.windowSince), .of(start.windowUntil), .text(start.configHash),
                .text(start.toolVersion), .integer(runID),
            ])
    }

    public func storeCounts() throws -> StoreCounts {
        try StoreCounts.read { try connection.query($0, []) }
    }
}
