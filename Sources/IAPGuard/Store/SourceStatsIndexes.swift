/// Schema migration 8: indexes that answer what the store holds from each source (the report's sources
/// table, on every run) without reading the tables.
///
/// The report shows, per configured source, how many records the store keeps and the time of the latest
/// one. Asked as one `GROUP BY source_name` over all four record tables, that read every row of the store
/// on every run (5 s at 1M purchases, most of a daily run's report stage). On `(source_name, time)` the
/// count is a walk of a narrow index and the latest time one index probe per source
/// (``Pipeline/sourceCountSQL`` and ``Pipeline/sourceLatestSQL``). The sightings' time is the same
/// expression the report used, so their index is on that expression.
///
/// Plain SQL that SQLite and PostgreSQL both run.
enum SourceStatsIndexes {
    static let migration = Schema.Migration(version: 8, name: "records and latest time by source", sql: sql)

    static let sql = """
        CREATE INDEX apple_sighting_source_time
            ON apple_sighting (source_name, (COALESCE(signed_date, purchase_date, received_at)));
        CREATE INDEX backend_order_source_time ON backend_order (source_name, created_at);
        CREATE INDEX credit_source_time ON credit (source_name, credited_at);
        CREATE INDEX notification_source_time ON notification (source_name, signed_date);
        """
}
