/// Indexes for the rules' key lookups (schema migration 4): evidence and rule queries look orders and
/// transactions up by `LOWER(app_account_token)` (tokens are compared case-insensitively) and orders by
/// `application_username`, which the core tables did not index, so each such lookup scanned the table.
/// Plain SQL shared by SQLite and PostgreSQL (both index expressions).
enum EvidenceIndexes {
    static let migration = Schema.Migration(version: 4, name: "rule lookup indexes", sql: sql)

    static let sql = """
        CREATE INDEX backend_order_token_lower ON backend_order (LOWER(app_account_token));
        CREATE INDEX backend_order_username ON backend_order (application_username);
        CREATE INDEX apple_transaction_token_lower ON apple_transaction (LOWER(app_account_token));
        """
}
