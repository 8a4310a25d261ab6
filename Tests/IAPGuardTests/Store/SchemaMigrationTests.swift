import Testing

@testable import IAPGuard

/// Upgrades of stores built by earlier versions of the schema.
@Suite struct SchemaMigrationTests {
    static func indexes(_ store: SQLiteStore) throws -> Set<String> {
        Set(
            try store.database.query("SELECT name FROM sqlite_master WHERE type = 'index'").compactMap {
                $0[0].textValue
            })
    }

    /// A migrated store taken back to version 6 (nothing of migrations 7 and later, the indexes migration 1
    /// built and a later one dropped, then `shape` run), and
    /// the indexes the latest schema has.
    static func version6Store(shape: String) throws -> (store: SQLiteStore, latest: Set<String>) {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        let latest = try indexes(store)
        try store.database.execute(
            """
            DROP INDEX apple_transaction_verification_revocation;
            DROP INDEX apple_sighting_source_time;
            DROP INDEX backend_order_source_time;
            DROP INDEX credit_source_time;
            DROP INDEX notification_source_time;
            DROP INDEX apple_transaction_test_environment;
            DROP INDEX apple_sighting_test_environment;
            DROP INDEX apple_transaction_renewal;
            DROP INDEX credit_unlinked;
            DROP INDEX credit_linked_by_order;
            DROP INDEX credit_linked_by_submission;
            DROP INDEX apple_sighting_submitted_order;
            DROP INDEX notification_grace_period;
            ALTER TABLE credit DROP COLUMN transaction_from_order;
            ALTER TABLE quarantine DROP COLUMN seen_run_id;
            DROP VIEW clawbacks;
            DROP TABLE credit_clawback;
            DROP VIEW unchecked_transactions;
            DROP TABLE api_unchecked;
            DROP VIEW users;
            DROP TABLE user_account;
            DROP VIEW cases;
            DROP VIEW case_findings;
            DROP VIEW case_history;
            DROP TABLE case_state;
            DROP TABLE case_finding;
            DROP TABLE case_event;
            DROP INDEX apple_transaction_app_transaction;
            DROP INDEX notification_app_transaction;
            DROP VIEW transactions;
            DROP VIEW sightings;
            DROP VIEW notifications;
            ALTER TABLE apple_transaction DROP COLUMN app_transaction_id;
            ALTER TABLE apple_sighting DROP COLUMN app_transaction_id;
            ALTER TABLE notification DROP COLUMN app_transaction_id;
            """ + termsColumnsDropped + """
                CREATE VIEW transactions AS SELECT transaction_id FROM apple_transaction;
                CREATE VIEW sightings AS SELECT sighting_id FROM apple_sighting;
                CREATE VIEW notifications AS SELECT notification_uuid FROM notification;
                DROP TABLE deferred_index;
                DROP TABLE coverage_gap;
                DROP TABLE coverage_state;
                ALTER TABLE incremental_scope DROP COLUMN pass;
                CREATE INDEX apple_transaction_token ON apple_transaction (app_account_token);
                CREATE INDEX backend_order_token ON backend_order (app_account_token);
                DELETE FROM schema_migration WHERE version > 6;
                """ + shape)
        #expect(try store.schemaVersion() == 6)
        return (store, latest)
    }

    /// Migrations 16, 18 and 29's columns dropped again (one statement a line).
    static var termsColumnsDropped: String {
        ["apple_transaction", "apple_sighting"].flatMap { table in
            PurchaseTermsSchema.columns.map { "ALTER TABLE \(table) DROP COLUMN \($0.name);\n" }
        }.joined() + "ALTER TABLE notification DROP COLUMN unknown_fields;\n"
            + "ALTER TABLE notification DROP COLUMN renewal_info;\n"
            + "ALTER TABLE notification DROP COLUMN grace_period_expires_date;\n"
    }

    /// Migration 6 gained its `verification` indexes after stores had been built with it: such a store
    /// upgrades to the latest version, and ends with the indexes the latest schema has.
    @Test func aVersion6StoreWithoutTheVerificationIndexesUpgrades() throws {
        let (store, latest) = try Self.version6Store(shape: "DROP INDEX apple_sighting_verification;")
        try store.migrate()
        #expect(try store.schemaVersion() == Schema.latestVersion)
        #expect(try Self.indexes(store) == latest)
    }

    /// The same upgrade from the version-6 store as migration 6 now builds it.
    @Test func aVersion6StoreWithTheVerificationIndexesUpgrades() throws {
        let (store, latest) = try Self.version6Store(
            shape: "CREATE INDEX apple_transaction_verification ON apple_transaction (verification);")
        try store.migrate()
        #expect(try store.schemaVersion() == Schema.latestVersion)
        #expect(try Self.indexes(store) == latest)
    }

    /// Migrations only move forward: a store a newer binary migrated is refused, never written.
    @Test func aStoreFromANewerSchemaIsRefused() throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        try store.database.execute(
            "INSERT INTO schema_migration (version, name, applied_at) VALUES (\(Schema.latestVersion + 1), 'future', 0)"
        )
        #expect {
            try store.migrate()
        } throws: { error in
            "\(error)".contains("written by a newer iapguard (schema \(Schema.latestVersion + 1)")
        }
    }

    /// Tokens are compared by their lower case everywhere, so only that is indexed, and a lookup by token
    /// reads that index.
    @Test func theTokenIsIndexedByItsLowerCaseOnly() throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        let names = try Self.indexes(store)
        #expect(names.isSuperset(of: ["apple_transaction_token_lower", "backend_order_token_lower"]))
        #expect(names.isDisjoint(with: ["apple_transaction_token", "backend_order_token"]))
        for view in ["transactions", "orders"] {
            let plan = try store.database.query(
                "EXPLAIN QUERY PLAN SELECT * FROM \(view) WHERE LOWER(app_account_token) = 'k'"
            ).compactMap { $0.last?.textValue }.joined(separator: "\n")
            #expect(plan.contains("_token_lower"), "\(view): \(plan)")
        }
    }

    static func tables(_ store: SQLiteStore) throws -> Set<String> {
        Set(
            try store.database.query("SELECT name FROM sqlite_master WHERE type = 'table'").compactMap {
                $0[0].textValue
            })
    }

    /// Earlier versions created the undo and carry tables on first use, outside any migration: migration 10
    /// adopts them as they are, rows included.
    @Test func aStoreWhoseUndoTablesWereCreatedOnFirstUseUpgrades() throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        try store.database.execute(
            """
            DELETE FROM schema_migration WHERE version = 10;
            INSERT INTO finding_undo (run_id, finding_id, pre_image) VALUES (3, 'F1', NULL);
            INSERT INTO finding_undo_pruned (pruned_through) VALUES (1000);
            """)
        try store.migrate()
        #expect(try store.schemaVersion() == Schema.latestVersion)
        #expect(
            try store.database.query("SELECT run_id, finding_id FROM finding_undo") == [[.integer(3), .text("F1")]])
        #expect(try store.database.query("SELECT pruned_through FROM finding_undo_pruned") == [[.integer(1000)]])
    }

    /// A store from before any run created them gains the four tables from migration 10.
    @Test func aStoreWithoutTheUndoTablesGainsThem() throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        let latest = try Self.tables(store)
        try store.database.execute(
            """
            DROP TABLE finding_undo; DROP TABLE finding_undo_carry; DROP TABLE finding_undo_pruned;
            DROP TABLE finding_carry;
            DELETE FROM schema_migration WHERE version = 10;
            """)
        #expect(!(try Self.tables(store)).contains("finding_carry"))
        try store.migrate()
        #expect(try Self.tables(store) == latest)
    }
}
