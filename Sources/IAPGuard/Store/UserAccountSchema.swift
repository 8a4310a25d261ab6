/// Schema migration 11: the backend's accounts (`kind: users` sources) and the `users` view.
///
/// Rules take a token's owner and a user's home country from here when the table has rows, and fall back
/// to the orders otherwise. The lower-cased token index serves `LOWER(app_account_token) = …` probes.
/// Plain SQL that SQLite and PostgreSQL both run.
enum UserAccountSchema {
    static let migration = Schema.Migration(version: 11, name: "backend accounts", sql: sql)

    static let sql = """
        CREATE TABLE user_account (
            user_id TEXT PRIMARY KEY,
            country TEXT,
            app_account_token TEXT,
            application_username TEXT,
            created_at INTEGER,
            source_name TEXT NOT NULL,
            source_ref TEXT NOT NULL,
            row_hash TEXT NOT NULL,
            first_run_id INTEGER NOT NULL,
            last_run_id INTEGER NOT NULL
        );
        CREATE INDEX user_account_token ON user_account (LOWER(app_account_token));
        CREATE INDEX user_account_username ON user_account (application_username);
        CREATE INDEX user_account_source ON user_account (source_name, created_at);
        CREATE VIEW users AS
            SELECT user_id, country, app_account_token, application_username, created_at, source_name, source_ref,
                   first_run_id, last_run_id
            FROM user_account;
        """
}
