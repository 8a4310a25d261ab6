/// Schema migration 6: what lets a daily run find what changed without reading everything.
///
/// - `file_state.stat_key`: the file's `FileIdentity` when its content was last hashed, so an unchanged
///   file is skipped without reading it.
/// - Indexes on the run ids that the incremental scope is seeded from (`last_run_id > ?`, `first_run_id > ?`,
///   `change_log.run_id > ?`): without them every seed statement scanned its whole table, so the scope took
///   time in proportion to the store rather than to the change. Run ids only grow, so new rows append to the
///   end of these indexes.
/// - Indexes for the scope's closure steps that had none: a scoped user's or original id's sightings
///   (`ScopeBuilder.backToTransactions`) and the credits dated from a changed FX rate on.
/// - Indexes for the rules' time queries (`IncrementalPlanner`), which ask what happened between the last
///   run's `:now` and this one's: credits by `reversed_at`, transactions by `revocation_date` (the
///   `refunds` view's transaction half). Both columns are mostly NULL, so the indexes stay cheap to keep.
/// - Indexes on `verification` for the counts every run's summary carries (`Pipeline.fillStoreCounts`):
///   transactions by outcome and failed sightings by reason were two full table reads per run.
///
/// Plain SQL that SQLite and PostgreSQL both run.
enum ChangeTrackingSchema {
    static let migration = Schema.Migration(version: 6, name: "file identity and run-id indexes", sql: sql)

    static let sql = """
        ALTER TABLE file_state ADD COLUMN stat_key TEXT;
        CREATE INDEX apple_transaction_last_run ON apple_transaction (last_run_id);
        CREATE INDEX apple_sighting_first_run ON apple_sighting (first_run_id);
        CREATE INDEX backend_order_last_run ON backend_order (last_run_id);
        CREATE INDEX credit_last_run ON credit (last_run_id);
        CREATE INDEX notification_first_run ON notification (first_run_id);
        CREATE INDEX change_log_run ON change_log (run_id);
        CREATE INDEX apple_sighting_submitter ON apple_sighting (submitted_by_user_id);
        CREATE INDEX apple_sighting_original ON apple_sighting (original_transaction_id);
        CREATE INDEX credit_credited_at ON credit (credited_at);
        CREATE INDEX credit_reversed_at ON credit (reversed_at);
        CREATE INDEX apple_transaction_revocation ON apple_transaction (revocation_date);
        CREATE INDEX apple_transaction_verification ON apple_transaction (verification);
        CREATE INDEX apple_sighting_verification ON apple_sighting (verification, verification_reason);
        """
}
