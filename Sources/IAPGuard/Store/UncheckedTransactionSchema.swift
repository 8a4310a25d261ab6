/// Schema migration 26: the transactions an App Store Server API source meant to ask Apple about and has not
/// (`api_unchecked`, the view `unchecked_transactions`).
///
/// A credit whose transaction Apple never confirmed is IAP-020's `credited-unconfirmed`, a high finding. When
/// the pull stops early (Apple down, the call budget spent, a call that failed), the credits it did not get to
/// would all look unconfirmed. The pull keeps here, per source, each candidate transaction it has not
/// answered yet and why; a transaction leaves when Apple answers (found or not found). IAP-020 reports
/// such a credit as inconclusive, naming the reason, instead of as a forgery. Plain SQL that SQLite and
/// PostgreSQL both run.
enum UncheckedTransactionSchema {
    static let migration = Schema.Migration(
        version: 26, name: "transactions the API pull has not asked about", sql: sql)

    static let sql = """
        CREATE TABLE api_unchecked (
            source_name TEXT NOT NULL DEFAULT '',
            transaction_id TEXT NOT NULL,
            reason TEXT NOT NULL DEFAULT '',
            run_id INTEGER,
            PRIMARY KEY (source_name, transaction_id)
        );
        CREATE INDEX api_unchecked_transaction ON api_unchecked (transaction_id);
        CREATE VIEW unchecked_transactions AS
            SELECT transaction_id, source_name, reason, run_id FROM api_unchecked;
        """
}
