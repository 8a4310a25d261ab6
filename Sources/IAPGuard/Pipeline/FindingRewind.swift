import Foundation

/// Makes re-running a window deterministic: a run's findings are judged (new, recurring, resolved)
/// against the state left by the runs of *earlier* windows, never by an earlier run of the same (or a
/// later) window.
///
/// Before the rule stage persists a run's findings it keeps the previous state of every `finding` row the
/// run is about to change in the pipeline's private table `finding_undo` (one JSON image per row, `NULL`
/// when the row did not exist). When a later run has a window ending at or before the `until` of such a
/// run, it first rewinds that run: restores the images (newest run first), deletes the run's
/// `finding_run` and `rule_run` rows, and marks the run `superseded`. All of this happens inside the rule
/// stage's transaction, so a crash leaves either the old or the new state.
struct FindingRewind {
    let database: SQLiteDatabase

    /// Creates the undo table if missing (a pipeline-private table; not part of the documented views).
    func prepare() throws {
        try database.execute(
            """
            CREATE TABLE IF NOT EXISTS finding_undo (
                run_id INTEGER NOT NULL,
                finding_id TEXT NOT NULL,
                pre_image TEXT,
                PRIMARY KEY (run_id, finding_id)
            )
            """)
    }

    /// The columns of the `finding` table, read from the schema so later migrations are covered.
    func findingColumns() throws -> [String] {
        try database.query("PRAGMA table_info(finding)").compactMap { $0[1].textValue }
    }

    /// Rewinds every run (other than `currentRunID`) that finished its rule stage and whose window ends
    /// at or after `until`. Returns the run ids rewound, newest first.
    @discardableResult
    func rewind(runsEndingAtOrAfter until: Int64, currentRunID: Int64) throws -> [Int64] {
        let runs = try database.query(
            """
            SELECT run_id FROM run
            WHERE run_id <> ? AND window_until >= ?
              AND (status IN ('ok', 'partial') OR run_id IN (SELECT run_id FROM finding_undo))
            ORDER BY run_id DESC
            """, [.integer(currentRunID), .integer(until)]
        ).compactMap { $0[0].integerValue }
        guard !runs.isEmpty else { return [] }
        let columns = try findingColumns()
        let restore =
            "INSERT OR REPLACE INTO finding (\(columns.joined(separator: ", "))) SELECT "
            + columns.map { "json_extract(?1, '$.\"\($0)\"')" }.joined(separator: ", ")
        for runID in runs {
            for row in try database.query(
                "SELECT finding_id, pre_image FROM finding_undo WHERE run_id = ?", [.integer(runID)])
            {
                if let image = row[1].textValue {
                    _ = try database.run(restore, [.text(image)])
                } else {
                    _ = try database.run("DELETE FROM finding WHERE finding_id = ?", [row[0]])
                }
            }
            for table in ["finding_run", "rule_run", "finding_undo"] {
                _ = try database.run("DELETE FROM \(table) WHERE run_id = ?", [.integer(runID)])
            }
            _ = try database.run(
                "UPDATE run SET status = 'superseded' WHERE run_id = ?", [.integer(runID)])
        }
        return runs
    }

    /// Keeps the current image of each finding row `runID` is about to write.
    func remember(findingIDs: [String], runID: Int64) throws {
        let columns = try findingColumns()
        let image = "json_object(" + columns.map { "'\($0)', \($0)" }.joined(separator: ", ") + ")"
        for id in Set(findingIDs).sorted() {
            _ = try database.run(
                """
                INSERT OR IGNORE INTO finding_undo (run_id, finding_id, pre_image)
                VALUES (?1, ?2, (SELECT \(image) FROM finding WHERE finding_id = ?2))
                """, [.integer(runID), .text(id)])
        }
    }
}
