/// The store's schema: versioned migrations, applied in order inside one transaction each.
///
/// Private tables hold what was ingested; rules and reports read only the documented **views**
/// (`transactions`, `sightings`, `orders`, `credits`, `notifications`, `refunds`, `apps`, `catalog`,
/// `testers`, `fx_rates`, `runs`, `users`). All times are integer epoch milliseconds UTC; prices are integer
/// milliunits of `currency` (Apple's convention: 0.99 USD = 990). The SQL sticks to a portable subset
/// (no SQLite-only date functions) so the same views exist on PostgreSQL.
public enum Schema {
    /// One migration step.
    public struct Migration: Sendable {
        public let version: Int
        public let name: String
        public let sql: String
        /// Work done after `sql` in the same transaction, for what portable SQL alone cannot do (reading a
        /// JSON text column into a new column); `nil` for most migrations.
        var backfill: (@Sendable (any SQLExecutor) throws -> Void)? = nil
    }

    /// All migrations in order. Append new ones; never edit a released one.
    public static let migrations: [Migration] = [
        Migration(version: 1, name: "core tables and views", sql: v1),
        FindingsSchema.migration,
        Migration(version: 3, name: "credit consumption", sql: v3),
        EvidenceIndexes.migration,
        IncrementalSchema.migration,
        ChangeTrackingSchema.migration,
        RefundIndexSchema.migration,
        SourceStatsIndexes.migration,
        TestEnvironmentIndexes.migration,
        FindingUndoSchema.migration,
        UserAccountSchema.migration,
        CaseSchema.migration,
        RefundReversalSchema.migration,
        AppTransactionSchema.migration,
        PurchaseTermsSchema.migration,
        DeferredIndexSchema.migration,
        RenewalInfoSchema.migration,
        AccountScopeIndexes.migration,
        CoverageGapSchema.migration,
        ScopePassSchema.migration,
        RefundReversalPlanSchema.migration,
        TokenIndexSchema.migration,
        UpgradeEventSchema.migration,
        RenewalIndexSchema.migration,
        UncheckedTransactionSchema.migration,
        CreditClawbackSchema.migration,
        CreditOrderLinkSchema.migration,
        GracePeriodSchema.migration,
        ClawbackViewSchema.migration,
        SubmittedOrderLinkSchema.migration,
        UpgradeTypeSchema.migration,
        QuarantineSeenSchema.migration,
    ]

    /// The newest schema version.
    public static var latestVersion: Int { migrations.last?.version ?? 0 }

    /// What the backend knows of a credit's consumption (optional columns; the `credits` view gains them).
    static let v3 = """
        ALTER TABLE credit ADD COLUMN consumed_units INTEGER;
        ALTER TABLE credit ADD COLUMN consumed_at INTEGER;
        DROP VIEW credits;
        CREATE VIEW credits AS
            SELECT credit_id, transaction_id, order_id, user_id, product_id, units, credited_at, reversed_at,
                   reversal_reason, source_name, source_ref, first_run_id, last_run_id, consumed_units, consumed_at
            FROM credit;
        """

    static let v1 = """
        CREATE TABLE run (
            run_id INTEGER PRIMARY KEY,
            started_at INTEGER NOT NULL,
            finished_at INTEGER,
            status TEXT NOT NULL,
            window_since INTEGER,
            window_until INTEGER,
            config_hash TEXT,
            tool_version TEXT NOT NULL,
            summary_json TEXT
        );
        CREATE TABLE run_source (
            run_id INTEGER NOT NULL,
            source_name TEXT NOT NULL,
            source_kind TEXT NOT NULL,
            records INTEGER NOT NULL DEFAULT 0,
            inserted INTEGER NOT NULL DEFAULT 0,
            updated INTEGER NOT NULL DEFAULT 0,
            unchanged INTEGER NOT NULL DEFAULT 0,
            errors INTEGER NOT NULL DEFAULT 0,
            files_skipped INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (run_id, source_name)
        );
        -- Records that could not be parsed: kept with their reason so nothing is lost.
        CREATE TABLE quarantine (
            quarantine_id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL,
            source_name TEXT NOT NULL,
            location TEXT NOT NULL,
            reason TEXT NOT NULL,
            raw_excerpt TEXT,
            raw_hash TEXT NOT NULL,
            UNIQUE (source_name, location, raw_hash)
        );
        -- Every copy of an Apple transaction that was seen, verified or not.
        CREATE TABLE apple_sighting (
            sighting_id TEXT PRIMARY KEY,
            transaction_id TEXT NOT NULL,
            original_transaction_id TEXT,
            web_order_line_item_id TEXT,
            bundle_id TEXT,
            product_id TEXT,
            type TEXT,
            quantity INTEGER,
            purchase_date INTEGER,
            original_purchase_date INTEGER,
            expires_date INTEGER,
            environment TEXT,
            storefront TEXT,
            currency TEXT,
            price INTEGER,
            app_account_token TEXT,
            in_app_ownership_type TEXT,
            transaction_reason TEXT,
            revocation_date INTEGER,
            revocation_reason INTEGER,
            revocation_type TEXT,
            revocation_percentage INTEGER,
            signed_date INTEGER,
            source_kind TEXT NOT NULL,
            source_name TEXT NOT NULL,
            source_ref TEXT NOT NULL,
            payload_hash TEXT NOT NULL,
            receipt_key TEXT,
            receipt_status INTEGER,
            submitted_by_user_id TEXT,
            submitted_order_id TEXT,
            received_at INTEGER,
            verification TEXT NOT NULL,
            verification_reason TEXT,
            verification_detail TEXT,
            anomalies TEXT,
            first_run_id INTEGER NOT NULL
        );
        CREATE INDEX apple_sighting_transaction ON apple_sighting (transaction_id);
        CREATE INDEX apple_sighting_receipt ON apple_sighting (receipt_key, submitted_by_user_id);
        -- The canonical view of each transaction: the best sighting (verified > not-signed > unverified,
        -- then the latest signed/received). Failed sightings never become canonical.
        CREATE TABLE apple_transaction (
            transaction_id TEXT PRIMARY KEY,
            original_transaction_id TEXT,
            web_order_line_item_id TEXT,
            bundle_id TEXT,
            product_id TEXT,
            type TEXT,
            quantity INTEGER,
            purchase_date INTEGER,
            original_purchase_date INTEGER,
            expires_date INTEGER,
            environment TEXT,
            storefront TEXT,
            currency TEXT,
            price INTEGER,
            app_account_token TEXT,
            in_app_ownership_type TEXT,
            transaction_reason TEXT,
            revocation_date INTEGER,
            revocation_reason INTEGER,
            revocation_type TEXT,
            revocation_percentage INTEGER,
            signed_date INTEGER,
            source_kind TEXT NOT NULL,
            verification TEXT NOT NULL,
            best_sighting_id TEXT NOT NULL,
            sighting_count INTEGER NOT NULL,
            conflict_count INTEGER NOT NULL DEFAULT 0,
            first_run_id INTEGER NOT NULL,
            last_run_id INTEGER NOT NULL
        );
        CREATE INDEX apple_transaction_original ON apple_transaction (original_transaction_id);
        CREATE INDEX apple_transaction_token ON apple_transaction (app_account_token);
        CREATE INDEX apple_transaction_purchase ON apple_transaction (purchase_date);
        CREATE TABLE backend_order (
            order_id TEXT PRIMARY KEY,
            user_id TEXT,
            bundle_id TEXT,
            product_id TEXT,
            quantity INTEGER,
            price INTEGER,
            currency TEXT,
            storefront TEXT,
            user_country TEXT,
            created_at INTEGER,
            status TEXT,
            transaction_id TEXT,
            app_account_token TEXT,
            application_username TEXT,
            environment TEXT,
            source_name TEXT NOT NULL,
            source_ref TEXT NOT NULL,
            row_hash TEXT NOT NULL,
            first_run_id INTEGER NOT NULL,
            last_run_id INTEGER NOT NULL
        );
        CREATE INDEX backend_order_transaction ON backend_order (transaction_id);
        CREATE INDEX backend_order_user ON backend_order (user_id);
        CREATE INDEX backend_order_token ON backend_order (app_account_token);
        CREATE TABLE credit (
            credit_id TEXT PRIMARY KEY,
            transaction_id TEXT,
            order_id TEXT,
            user_id TEXT,
            product_id TEXT,
            units INTEGER,
            credited_at INTEGER,
            reversed_at INTEGER,
            reversal_reason TEXT,
            source_name TEXT NOT NULL,
            source_ref TEXT NOT NULL,
            row_hash TEXT NOT NULL,
            first_run_id INTEGER NOT NULL,
            last_run_id INTEGER NOT NULL
        );
        CREATE INDEX credit_transaction ON credit (transaction_id, user_id);
        CREATE INDEX credit_user ON credit (user_id);
        CREATE INDEX credit_order ON credit (order_id);
        CREATE TABLE notification (
            notification_uuid TEXT PRIMARY KEY,
            notification_type TEXT,
            subtype TEXT,
            signed_date INTEGER,
            environment TEXT,
            bundle_id TEXT,
            app_apple_id INTEGER,
            transaction_id TEXT,
            original_transaction_id TEXT,
            product_id TEXT,
            revocation_date INTEGER,
            revocation_reason INTEGER,
            revocation_percentage INTEGER,
            auto_renew_product_id TEXT,
            auto_renew_status INTEGER,
            consumption_request_reason TEXT,
            verification TEXT NOT NULL,
            verification_reason TEXT,
            verification_detail TEXT,
            source_name TEXT NOT NULL,
            source_ref TEXT NOT NULL,
            payload_hash TEXT NOT NULL,
            first_run_id INTEGER NOT NULL
        );
        CREATE INDEX notification_transaction ON notification (transaction_id);
        -- Every change an update made to an existing row (a refund arriving later, an order status change).
        CREATE TABLE change_log (
            change_id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL,
            entity TEXT NOT NULL,
            entity_key TEXT NOT NULL,
            field TEXT NOT NULL,
            old_value TEXT,
            new_value TEXT
        );
        CREATE INDEX change_log_entity ON change_log (entity, entity_key);
        -- Reference data, replaced from the config at the start of each run.
        CREATE TABLE ref_app (
            bundle_id TEXT PRIMARY KEY,
            app_apple_id INTEGER,
            environments TEXT NOT NULL
        );
        CREATE TABLE ref_product (
            bundle_id TEXT NOT NULL,
            product_id TEXT NOT NULL,
            type TEXT NOT NULL,
            units INTEGER NOT NULL,
            ref_price INTEGER,
            ref_currency TEXT,
            PRIMARY KEY (bundle_id, product_id)
        );
        CREATE TABLE ref_tester (
            user_id TEXT PRIMARY KEY,
            note TEXT
        );
        CREATE TABLE ref_fx_rate (
            currency TEXT NOT NULL,
            rate_date INTEGER NOT NULL,
            per_eur REAL NOT NULL,
            source TEXT NOT NULL,
            PRIMARY KEY (currency, rate_date)
        );
        -- Incremental file ingest: what was already read from each file.
        CREATE TABLE file_state (
            source_name TEXT NOT NULL,
            path TEXT NOT NULL,
            size INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            run_id INTEGER NOT NULL,
            PRIMARY KEY (source_name, path)
        );

        CREATE VIEW transactions AS
            SELECT transaction_id, original_transaction_id, web_order_line_item_id, bundle_id, product_id,
                   type, quantity, purchase_date, original_purchase_date, expires_date, environment,
                   storefront, currency, price, app_account_token, in_app_ownership_type, transaction_reason,
                   revocation_date, revocation_reason, revocation_type, revocation_percentage, signed_date,
                   source_kind, verification, sighting_count, conflict_count, first_run_id, last_run_id
            FROM apple_transaction;
        CREATE VIEW sightings AS
            SELECT sighting_id, transaction_id, original_transaction_id, web_order_line_item_id, bundle_id,
                   product_id, type, quantity, purchase_date, original_purchase_date, expires_date, environment,
                   storefront, currency, price, app_account_token, in_app_ownership_type, transaction_reason,
                   revocation_date, revocation_reason, revocation_type, revocation_percentage, signed_date,
                   source_kind, source_name, source_ref, payload_hash, receipt_key, receipt_status,
                   submitted_by_user_id, submitted_order_id, received_at, verification, verification_reason,
                   verification_detail, anomalies, first_run_id
            FROM apple_sighting;
        CREATE VIEW orders AS
            SELECT order_id, user_id, bundle_id, product_id, quantity, price, currency, storefront,
                   user_country, created_at, status, transaction_id, app_account_token, application_username,
                   environment, source_name, source_ref, first_run_id, last_run_id
            FROM backend_order;
        CREATE VIEW credits AS
            SELECT credit_id, transaction_id, order_id, user_id, product_id, units, credited_at, reversed_at,
                   reversal_reason, source_name, source_ref, first_run_id, last_run_id
            FROM credit;
        CREATE VIEW notifications AS
            SELECT notification_uuid, notification_type, subtype, signed_date, environment, bundle_id,
                   app_apple_id, transaction_id, original_transaction_id, product_id, revocation_date,
                   revocation_reason, revocation_percentage, auto_renew_product_id, auto_renew_status,
                   consumption_request_reason, verification, verification_reason, verification_detail,
                   source_name, source_ref, first_run_id
            FROM notification;
        -- Refund-related events from verified sources only: REFUND / REVOKE / REFUND_REVERSED /
        -- REFUND_DECLINED / CONSUMPTION_REQUEST notifications, and revocation fields on transactions.
        CREATE VIEW refunds AS
            SELECT 'notification:' || notification_uuid AS event_id, transaction_id, original_transaction_id,
                   notification_type AS event_type, COALESCE(revocation_date, signed_date) AS event_date,
                   revocation_reason, revocation_percentage, 'notification' AS origin
            FROM notification
            WHERE verification = 'verified'
              AND notification_type IN ('REFUND', 'REVOKE', 'REFUND_REVERSED', 'REFUND_DECLINED', 'CONSUMPTION_REQUEST')
            UNION ALL
            SELECT 'transaction:' || transaction_id AS event_id, transaction_id, original_transaction_id,
                   CASE WHEN revocation_reason IS NULL AND in_app_ownership_type = 'FAMILY_SHARED' THEN 'REVOKE'
                        ELSE 'REFUND' END AS event_type,
                   revocation_date AS event_date, revocation_reason, revocation_percentage,
                   'transaction' AS origin
            FROM apple_transaction
            WHERE revocation_date IS NOT NULL AND verification IN ('verified', 'not-signed');
        CREATE VIEW apps AS SELECT bundle_id, app_apple_id, environments FROM ref_app;
        CREATE VIEW catalog AS SELECT bundle_id, product_id, type, units, ref_price, ref_currency FROM ref_product;
        CREATE VIEW testers AS SELECT user_id, note FROM ref_tester;
        CREATE VIEW fx_rates AS SELECT currency, rate_date, per_eur, source FROM ref_fx_rate;
        CREATE VIEW runs AS
            SELECT run_id, started_at, finished_at, status, window_since, window_until, config_hash, tool_version
            FROM run;
        """
}
