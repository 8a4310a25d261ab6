import Foundation

/// Makes re-running a window deterministic: a run's findings are judged (new, recurring, resolved)
/// against the state left by the runs of *earlier* windows, never by an earlier run of the same (or a
/// later) window.
///
/// Before the rule stage persists a run's findings it keeps the previous state of every `finding` row the
/// run is about to change in the pipeline's private table `finding_undo` (one JSON image per row, `NULL`
/// when the row did not exist); for the findings an incremental run carries over unchanged, only their status
/// and run ids move, and `finding_undo_carry` keeps those (written set-based, one statement per run). When a later run has a window ending at or before the `until` of such a
/// run, it first rewinds that run: restores the images (newest run first), deletes the run's
/// `finding_run` and `rule_run` rows, and marks the run `superseded`. All of this happens inside the rule
/// stage's transaction, so a crash leaves either the old or the new state.
///
/// Undo images are kept for runs whose window ended within the rewind horizon (`rewind_horizon_days`) of
/// the latest evaluated window; older ones are deleted by ``prune(horizon:latestUntil:)`` and the end of
/// the newest pruned window is kept in `finding_undo_pruned`, so a window that would need them is refused
/// (``checkRewindable(until:)``) instead of being evaluated against the wrong state.
struct FindingRewind {
    let database: any SQLExecutor

    /// Creates the undo table if missing (a pipeline-private table; not part of the documented views).
    func prepare() throws {
        try database.execute(
            database.dialect.ddl(
                """
                CREATE TABLE IF NOT EXISTS finding_undo (
                    run_id INTEGER NOT NULL,
                    finding_id TEXT NOT NULL,
                    pre_image TEXT,
                    PRIMARY KEY (run_id, finding_id)
                )
                """))
        try database.execute(
            database.dialect.ddl(
                """
                CREATE TABLE IF NOT EXISTS finding_undo_carry (
                    run_id INTEGER NOT NULL,
                    finding_id TEXT NOT NULL,
                    status TEXT NOT NULL,
                    last_seen_run_id INTEGER,
                    last_run_id INTEGER,
                    PRIMARY KEY (run_id, finding_id)
                )
                """))
        try database.execute(
            database.dialect.ddl("CREATE TABLE IF NOT EXISTS finding_undo_pruned (pruned_through INTEGER NOT NULL)"))
    }

    /// The end of the newest window whose undo images were pruned, if any.
    func prunedThrough() throws -> Int64? {
        try database.query("SELECT MAX(pruned_through) FROM finding_undo_pruned", []).first?.first?.integerValue
    }

    /// Throws a ``WindowError`` when a window ending at `until` would have to rewind a run whose undo images
    /// were pruned.
    func checkRewindable(until: Int64) throws {
        guard let through = try prunedThrough(), until <= through else { return }
        throw WindowError(
            message:
                "the window ending \(TimeParser.iso8601(until)) cannot be re-evaluated any more: later windows (up to "
                + "\(TimeParser.iso8601(through))) are older than rewind_horizon_days, so their findings can no "
                + "longer be rewound; use a later --until")
    }

    /// Deletes the undo images of runs whose window ended more than `horizon` milliseconds before the
    /// latest evaluated window end (`latestUntil` or a stored run's, whichever is later). Returns the
    /// number of images deleted.
    @discardableResult
    func prune(horizon: Int64, latestUntil: Int64) throws -> Int {
        let stored = try database.query(
            "SELECT MAX(window_until) FROM run WHERE status IN ('ok', 'partial')", []
        ).first?.first?.integerValue
        let cutoff = max(latestUntil, stored ?? latestUntil) - horizon
        let runs = try database.query(
            """
            SELECT r.run_id, r.window_until FROM run r
            WHERE r.window_until < ?
              AND (r.run_id IN (SELECT run_id FROM finding_undo) OR r.run_id IN (SELECT run_id FROM finding_undo_carry))
            ORDER BY r.run_id
            """, [.integer(cutoff)]
        )
        guard !runs.isEmpty else { return 0 }
        var deleted = 0
        var through = try prunedThrough() ?? Int64.min
        for row in runs {
            guard let runID = row[0].integerValue, let until = row[1].integerValue else { continue }
            for table in ["finding_undo", "finding_undo_carry"] {
                deleted += Int(
                    try database.query("SELECT COUNT(*) FROM \(table) WHERE run_id = ?", [.integer(runID)])
                        .first?.first?.integerValue ?? 0)
                try database.run("DELETE FROM \(table) WHERE run_id = ?", [.integer(runID)])
            }
            through = max(through, until)
        }
        try database.run("DELETE FROM finding_undo_pruned", [])
        try database.run("INSERT INTO finding_undo_pruned (pruned_through) VALUES (?)", [.integer(through)])
        return deleted
    }

    /// The columns of the `finding` table, read from the schema so later migrations are covered.
    func findingColumns() throws -> [String] {
        try database.columnNames(of: "finding")
    }

    /// Rewinds every run (other than `currentRunID`) that finished its rule stage and whose window ends
    /// at or after `until`. Returns the run ids rewound, newest first.
    @discardableResult
    func rewind(runsEndingAtOrAfter until: Int64, currentRunID: Int64) throws -> [Int64] {
        let runs = try database.query(
            """
            SELECT run_id FROM run
            WHERE run_id <> ? AND window_until >= ?
              AND (status IN ('ok', 'partial') OR run_id IN (SELECT run_id FROM finding_undo)
                   OR run_id IN (SELECT run_id FROM finding_undo_carry))
            ORDER BY run_id DESC
            """, [.integer(currentRunID), .integer(until)]
        ).compactMap { $0[0].integerValue }
        guard !runs.isEmpty else { return [] }
        let columns = try findingColumns()
        let restore =
            "INSERT INTO finding (\(columns.joined(separator: ", "))) VALUES ("
            + columns.map { _ in "?" }.joined(separator: ", ") + ") ON CONFLICT (finding_id) DO UPDATE SET "
            + columns.filter { $0 != "finding_id" }.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        for runID in runs {
            for row in try database.query(
                "SELECT finding_id, pre_image FROM finding_undo WHERE run_id = ? ORDER BY finding_id", [.integer(runID)]
            ) {
                if let image = row[1].textValue {
                    try database.run(restore, try Self.decode(image, columns: columns))
                } else {
                    try database.run("DELETE FROM finding WHERE finding_id = ?", [row[0]])
                }
            }
            // Carried-over rows: only their status and run ids moved (after the images: for a row with both,
            // the carry record holds the older values of these columns).
            try database.run(
                """
                UPDATE finding SET
                    status = (SELECT u.status FROM finding_undo_carry u
                              WHERE u.run_id = ? AND u.finding_id = finding.finding_id),
                    last_seen_run_id = (SELECT u.last_seen_run_id FROM finding_undo_carry u
                                        WHERE u.run_id = ? AND u.finding_id = finding.finding_id),
                    last_run_id = (SELECT u.last_run_id FROM finding_undo_carry u
                                   WHERE u.run_id = ? AND u.finding_id = finding.finding_id)
                WHERE finding_id IN (SELECT finding_id FROM finding_undo_carry WHERE run_id = ?)
                """, [.integer(runID), .integer(runID), .integer(runID), .integer(runID)])
            for table in ["finding_run", "rule_run", "finding_undo", "finding_undo_carry"] {
                try database.run("DELETE FROM \(table) WHERE run_id = ?", [.integer(runID)])
            }
            try database.run("UPDATE run SET status = 'superseded' WHERE run_id = ?", [.integer(runID)])
        }
        return runs
    }

    /// Keeps the current image of each finding row `runID` is about to write (the first image wins when
    /// a run is resumed after a crash: it is the state before the run).
    func remember(findingIDs: [String], runID: Int64) throws {
        let columns = try findingColumns()
        let select = "SELECT \(columns.joined(separator: ", ")) FROM finding WHERE finding_id = ?"
        for id in Set(findingIDs).sorted() {
            let image = try database.query(select, [.text(id)]).first.map { Self.encode($0, columns: columns) }
            try database.run(
                """
                INSERT INTO finding_undo (run_id, finding_id, pre_image) VALUES (?, ?, ?)
                ON CONFLICT (run_id, finding_id) DO NOTHING
                """, [.integer(runID), .text(id), .of(image)])
        }
    }

    /// Keeps, set-based, the status and run ids of each finding staged in `finding_carry` (the findings
    /// `runID` carries over: only these columns change), unless the run already keeps a full image of it.
    func rememberCarried(runID: Int64) throws {
        try database.run(
            """
            INSERT INTO finding_undo_carry (run_id, finding_id, status, last_seen_run_id, last_run_id)
            SELECT ?, f.finding_id, f.status, f.last_seen_run_id, f.last_run_id FROM finding f
            WHERE f.finding_id IN (SELECT finding_id FROM finding_carry)
              AND NOT EXISTS (SELECT 1 FROM finding_undo u WHERE u.run_id = ? AND u.finding_id = f.finding_id)
            ON CONFLICT (run_id, finding_id) DO NOTHING
            """, [.integer(runID), .integer(runID)])
    }

    /// A row as JSON text: column → `{"i": n}`, `{"r": x}`, `{"s": "…"}` or null, so
    /// the exact SQL types come back on restore, on any engine.
    static func encode(_ row: [SQLValue], columns: [String]) -> String {
        var object: [String: Any] = [:]
        for (column, value) in zip(columns, row) {
            switch value {
            case .null: object[column] = NSNull()
            case .integer(let v): object[column] = ["i": v]
            case .real(let v): object[column] = ["r": v]
            case .text(let v): object[column] = ["s": v]
            }
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The values of `columns` from an image made by ``encode(_:columns:)``.
    static func decode(_ image: String, columns: [String]) throws -> [SQLValue] {
        guard let object = try JSONSerialization.jsonObject(with: Data(image.utf8)) as? [String: Any] else {
            throw StoreError(message: "finding_undo: a pre-image is not a JSON object")
        }
        return columns.map { column in
            guard let cell = object[column] as? [String: Any] else { return .null }
            if let v = cell["i"] as? NSNumber { return .integer(v.int64Value) }
            if let v = cell["r"] as? NSNumber { return .real(v.doubleValue) }
            if let v = cell["s"] as? String { return .text(v) }
            return .null
        }
    }
}
