/// Schema migration 20: the standing credits IAP-012 cannot check, kept between runs (``CoverageGaps``),
/// and the run that last brought them up to date. Plain SQL that SQLite and PostgreSQL both run.
enum CoverageGapSchema {
    static let migration = Schema.Migration(version: 20, name: "credits IAP-012 cannot check", sql: sql)

    static let sql = """
        CREATE TABLE coverage_gap (
            credit_id TEXT PRIMARY KEY,
            source_kind TEXT,
            reversed_at INTEGER
        );
        CREATE TABLE coverage_state (
            run_id INTEGER NOT NULL
        );
        """
}
