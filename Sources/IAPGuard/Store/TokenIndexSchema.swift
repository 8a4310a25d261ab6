/// Schema migration 23: drops the indexes on the token as written, kept beside the ones on its lower case.
///
/// Rules, the scope, the lookup and cases compare tokens by `LOWER(app_account_token)` (a UUID may arrive in
/// either case), so they read `apple_transaction_token_lower` and `backend_order_token_lower` (migration 4).
/// The two indexes of migration 1 served no query (`EXPLAIN QUERY PLAN` of every statement of a full and of a
/// daily run at 1M), yet every purchase wrote both: a day's purchases changed 9.2k of their pages, and a
/// first load built them. Plain SQL that SQLite and PostgreSQL both run.
enum TokenIndexSchema {
    static let migration = Schema.Migration(version: 23, name: "no index on the token's raw case", sql: sql)

    static let sql = """
        DROP INDEX apple_transaction_token;
        DROP INDEX backend_order_token;
        """
}
