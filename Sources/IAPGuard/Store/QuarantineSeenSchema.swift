/// Schema migration 33: the last run that read each quarantined record again.
///
/// A file read whole says again which of its lines are bad; what an earlier read quarantined and this one did
/// not is gone from the file and leaves the quarantine. The write path stamps each quarantined record it meets
/// with the run (`seen_run_id`), and the records of the file the run did not stamp are removed
/// (``PurchaseStore/removeQuarantined(sourceName:fileName:notSeenIn:)``), so memory does not grow with the
/// number of bad lines. Existing rows take their own run.
/// Plain SQL that SQLite and PostgreSQL both run.
enum QuarantineSeenSchema {
    static let migration = Schema.Migration(
        version: 33, name: "the last run that read each quarantined record", sql: sql)

    static let sql = """
        ALTER TABLE quarantine ADD COLUMN seen_run_id INTEGER;
        UPDATE quarantine SET seen_run_id = run_id;
        """
}
