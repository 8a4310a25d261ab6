/// Schema migration 27: clawbacks written as ledger rows of their own (`credit_clawback`).
///
/// Append-only ledgers never edit a grant: a refund is taken back by a new entry with negative units for the
/// same transaction (or order) and account. Such an entry is not a credit, so it is kept apart from `credit`,
/// which every rule reads as what was granted; ``SQLBackedStore/applyCreditClawbacks(runID:)`` marks the
/// grants it covers as reversed. Keyed, hashed and logged like the credits. Plain SQL that SQLite and
/// PostgreSQL both run.
enum CreditClawbackSchema {
    static let migration = Schema.Migration(version: 27, name: "clawbacks as ledger rows", sql: sql)

    static let sql = """
        CREATE TABLE credit_clawback (
            credit_id TEXT PRIMARY KEY,
            transaction_id TEXT,
            order_id TEXT,
            user_id TEXT,
            product_id TEXT,
            units INTEGER,
            credited_at INTEGER,
            reversal_reason TEXT,
            source_name TEXT NOT NULL,
            source_ref TEXT NOT NULL,
            row_hash TEXT NOT NULL,
            first_run_id INTEGER NOT NULL,
            last_run_id INTEGER NOT NULL
        );
        """
}
