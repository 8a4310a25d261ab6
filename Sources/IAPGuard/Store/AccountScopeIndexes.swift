/// Schema migration 19: the accounts a daily run's scope is seeded from (`user_account.last_run_id > ?`,
/// see ``ScopeBuilder``) are found through an index, as the other tables' changed rows are. Plain SQL that
/// SQLite and PostgreSQL both run.
enum AccountScopeIndexes {
    static let migration = Schema.Migration(version: 19, name: "accounts changed since a run", sql: sql)

    static let sql = """
        CREATE INDEX user_account_last_run ON user_account (last_run_id);
        """
}
