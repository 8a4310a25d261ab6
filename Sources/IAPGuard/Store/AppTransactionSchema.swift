/// Schema migration 15: Apple's `appTransactionId` (one id per Apple Account per app, one per family member)
/// on transactions, sightings and notifications, and family revocations in the `refunds` view.
///
/// The `transactions`, `sightings` and `notifications` views are recreated with every column they had plus
/// `app_transaction_id`. The `refunds` view is recreated as migration 13 left it, except that a transaction
/// whose `revocation_type` is `FAMILY_REVOKE` is a `REVOKE` event (the purchaser stopped sharing; no
/// customer was refunded), beside the older rule for a `FAMILY_SHARED` copy revoked without a reason.
/// The index on `app_transaction_id` serves the per-account grouping of IAP-021 and the lookup. Plain SQL
/// that SQLite and PostgreSQL both run.
enum AppTransactionSchema {
    static let migration = Schema.Migration(version: 15, name: "app transaction id", sql: sql)

    static let sql = """
        ALTER TABLE apple_transaction ADD COLUMN app_transaction_id TEXT;
        ALTER TABLE apple_sighting ADD COLUMN app_transaction_id TEXT;
        ALTER TABLE notification ADD COLUMN app_transaction_id TEXT;
        CREATE INDEX apple_transaction_app_transaction ON apple_transaction (app_transaction_id);
        CREATE INDEX notification_app_transaction ON notification (app_transaction_id);
        DROP VIEW transactions;
        CREATE VIEW transactions AS
            SELECT transaction_id, original_transaction_id, web_order_line_item_id, bundle_id, product_id,
                   type, quantity, purchase_date, original_purchase_date, expires_date, environment,
                   storefront, currency, price, app_account_token, in_app_ownership_type, transaction_reason,
                   revocation_date, revocation_reason, revocation_type, revocation_percentage, signed_date,
                   source_kind, verification, sighting_count, conflict_count, first_run_id, last_run_id,
                   app_transaction_id
            FROM apple_transaction;
        DROP VIEW sightings;
        CREATE VIEW sightings AS
            SELECT sighting_id, transaction_id, original_transaction_id, web_order_line_item_id, bundle_id,
                   product_id, type, quantity, purchase_date, original_purchase_date, expires_date, environment,
                   storefront, currency, price, app_account_token, in_app_ownership_type, transaction_reason,
                   revocation_date, revocation_reason, revocation_type, revocation_percentage, signed_date,
                   source_kind, source_name, source_ref, payload_hash, receipt_key, receipt_status,
                   submitted_by_user_id, submitted_order_id, received_at, verification, verification_reason,
                   verification_detail, anomalies, first_run_id, app_transaction_id
            FROM apple_sighting;
        DROP VIEW notifications;
        CREATE VIEW notifications AS
            SELECT notification_uuid, notification_type, subtype, signed_date, environment, bundle_id,
                   app_apple_id, transaction_id, original_transaction_id, product_id, revocation_date,
                   revocation_reason, revocation_percentage, auto_renew_product_id, auto_renew_status,
                   consumption_request_reason, verification, verification_reason, verification_detail,
                   source_name, source_ref, first_run_id, app_transaction_id
            FROM notification;
        DROP VIEW refunds;
        CREATE VIEW refunds AS
            SELECT 'notification:' || notification_uuid AS event_id, transaction_id, original_transaction_id,
                   notification_type AS event_type, COALESCE(revocation_date, signed_date) AS event_date,
                   revocation_reason, revocation_percentage, 'notification' AS origin
            FROM notification
            WHERE verification = 'verified'
              AND notification_type IN ('REFUND', 'REVOKE', 'REFUND_REVERSED', 'REFUND_DECLINED', 'CONSUMPTION_REQUEST')
            UNION ALL
            SELECT 'transaction:' || transaction_id AS event_id, transaction_id, original_transaction_id,
                   CASE WHEN revocation_type = 'FAMILY_REVOKE' THEN 'REVOKE'
                        WHEN revocation_reason IS NULL AND in_app_ownership_type = 'FAMILY_SHARED' THEN 'REVOKE'
                        ELSE 'REFUND' END AS event_type,
                   revocation_date AS event_date, revocation_reason, revocation_percentage,
                   'transaction' AS origin
            FROM apple_transaction
            WHERE revocation_date IS NOT NULL AND verification IN ('verified', 'not-signed')
            UNION ALL
            SELECT 'reversal:' || t.transaction_id AS event_id, t.transaction_id, t.original_transaction_id,
                   'REFUND_REVERSED' AS event_type, t.signed_date AS event_date,
                   CAST(NULL AS INTEGER) AS revocation_reason, CAST(NULL AS INTEGER) AS revocation_percentage,
                   'transaction' AS origin
            FROM apple_transaction t
            WHERE t.verification = 'verified' AND t.revocation_date IS NULL
              AND t.transaction_id IN (
                  SELECT n.transaction_id FROM notification n
                  WHERE n.notification_type IN ('REFUND', 'REVOKE') AND n.verification = 'verified')
              AND t.signed_date > (
                  SELECT MAX(n.signed_date) FROM notification n
                  WHERE n.transaction_id = t.transaction_id AND n.notification_type IN ('REFUND', 'REVOKE')
                    AND n.verification = 'verified');
        """
}
