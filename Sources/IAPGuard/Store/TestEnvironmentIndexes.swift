/// Schema migration 9: the few transactions and sightings outside Production (Sandbox, Xcode), found
/// through partial indexes instead of by reading every row.
///
/// IAP-017 (sandbox purchase credited) starts from every Sandbox or Xcode transaction and sighting. Nearly
/// all purchases are Production, so a full index on `environment` would store every row to find a handful,
/// and without an index the rule read both tables whole, in a daily run too (8.3 s at 10M purchases). These
/// indexes hold only the rows whose environment is not `Production`: they cost nothing to keep up for
/// Production rows, and a query that says `environment <> 'Production'` in so many words (both SQLite and
/// PostgreSQL match a partial index's condition against the query's own terms) searches them.
///
/// Plain SQL that SQLite and PostgreSQL both run.
enum TestEnvironmentIndexes {
    static let migration = Schema.Migration(version: 9, name: "transactions outside Production", sql: sql)

    static let sql = """
        CREATE INDEX apple_transaction_test_environment ON apple_transaction (environment)
            WHERE environment <> 'Production';
        CREATE INDEX apple_sighting_test_environment ON apple_sighting (environment)
            WHERE environment <> 'Production';
        """
}
