/// Schema migration 17: the secondary indexes a first load builds after its rows instead of row by row.
///
/// `deferred_index` holds the definition of each index dropped for a bulk load (see
/// ``SQLiteStore/beginBulkLoad()``) until it is built again. A run killed mid-load leaves its rows here, and
/// the next run finishes the load and builds them. Plain SQL that SQLite and PostgreSQL both run (PostgreSQL
/// loads through `COPY` and never defers its indexes, so its table stays empty).
enum DeferredIndexSchema {
    static let migration = Schema.Migration(version: 17, name: "indexes deferred during a first load", sql: sql)

    static let sql = """
        CREATE TABLE deferred_index (
            name TEXT PRIMARY KEY,
            table_name TEXT NOT NULL,
            definition TEXT NOT NULL
        );
        """
}
