/// The pipeline-private tables behind re-evaluating a window (schema migration 10; not part of the documented
/// views): the pre-images of the findings each run changed (`finding_undo`), the status and run ids of the
/// findings it carried over unchanged (`finding_undo_carry`), the end of the newest window whose images were
/// pruned (`finding_undo_pruned`), and the scratch list of a run's carried-over finding ids (`finding_carry`).
/// See `FindingRewind`.
///
/// Stores written by earlier versions created these tables on first use, outside any migration: every
/// statement is `IF NOT EXISTS`, so the migration adopts them as they are.
enum FindingUndoSchema {
    static let migration = Schema.Migration(version: 10, name: "finding undo and carry tables", sql: sql)

    static let sql = """
        CREATE TABLE IF NOT EXISTS finding_undo (
            run_id INTEGER NOT NULL,
            finding_id TEXT NOT NULL,
            pre_image TEXT,
            PRIMARY KEY (run_id, finding_id)
        );
        CREATE TABLE IF NOT EXISTS finding_undo_carry (
            run_id INTEGER NOT NULL,
            finding_id TEXT NOT NULL,
            status TEXT NOT NULL,
            last_seen_run_id INTEGER,
            last_run_id INTEGER,
            PRIMARY KEY (run_id, finding_id)
        );
        CREATE TABLE IF NOT EXISTS finding_undo_pruned (pruned_through INTEGER NOT NULL);
        CREATE TABLE IF NOT EXISTS finding_carry (finding_id TEXT PRIMARY KEY);
        """
}
