/// Schema migration 21: which step of the scope closure added a shared scope key (``ScopeBuilder``): 0 for
/// the seeds, 1 for the keys the closure adds. The closure's second fan-out reads only the keys added after
/// the first one started. Plain SQL that SQLite and PostgreSQL both run.
enum ScopePassSchema {
    static let migration = Schema.Migration(version: 21, name: "scope keys by closure step", sql: sql)

    static let sql = """
        ALTER TABLE incremental_scope ADD COLUMN pass INTEGER NOT NULL DEFAULT 0;
        """
}
