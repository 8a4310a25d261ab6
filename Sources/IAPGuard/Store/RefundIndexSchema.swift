/// Schema migration 7: the `refunds` view's transaction half read through an index on
/// `(verification, revocation_date)`.
///
/// That half asks for `revocation_date IS NOT NULL AND verification IN ('verified', 'not-signed')`. With
/// migration 6's index on `verification` alone, SQLite searched by verification, which matches nearly every
/// transaction, and read the whole table each time the view was used: at 1M purchases the time queries of
/// IAP-015 and IAP-016 took 3.5 s and 1.6 s of every daily run. On `(verification, revocation_date)` the
/// same condition is a range of revoked transactions per verification value (0.06 s each). The new index
/// also answers everything the `verification` index did (its first column), so that one is dropped.
///
/// Migration 6 gained its two `verification` indexes after stores had already been built with it, so a
/// version-6 store may lack them: the old index is dropped only if it exists, and the sightings' one is
/// created if it is missing.
///
/// Plain SQL that SQLite and PostgreSQL both run.
enum RefundIndexSchema {
    static let migration = Schema.Migration(version: 7, name: "refunds by verification and revocation date", sql: sql)

    static let sql = """
        CREATE INDEX apple_transaction_verification_revocation ON apple_transaction (verification, revocation_date);
        DROP INDEX IF EXISTS apple_transaction_verification;
        CREATE INDEX IF NOT EXISTS apple_sighting_verification ON apple_sighting (verification, verification_reason);
        """
}
