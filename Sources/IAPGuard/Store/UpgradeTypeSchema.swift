/// Schema migration 32: only an auto-renewable subscription is upgraded; another product's revocation marked
/// as an upgrade is a refund in the `refunds` view.
///
/// A legacy receipt carries no product type, so ingest labels any `cancellation_date` with `is_upgraded`
/// `"true"` an `UPGRADE` (migration 24). A consumable or non-consumable is never upgraded: a receipt claiming
/// it is hides a refund (IAP-015 then never saw the credit that stood after it). The view now takes the label
/// only for a transaction whose type — Apple's, else the configured catalog's — is `Auto-Renewable
/// Subscription`, or that neither names; the signed path already refuses the label for a type Apple names
/// (``SignedTransactionParser``). The catalog is part of every rule's fingerprint, so a catalog change
/// re-evaluates the rules that read this view. The view is otherwise as migration 24 left it. Plain SQL that
/// SQLite and PostgreSQL both run.
enum UpgradeTypeSchema {
    static let migration = Schema.Migration(
        version: 32, name: "only subscriptions are upgraded in the refunds view", sql: sql)

    static let sql = """
        DROP VIEW refunds;
        CREATE VIEW refunds AS
            SELECT 'notification:' || notification_uuid AS event_id, transaction_id, original_transaction_id,
                   notification_type AS event_type, COALESCE(revocation_date, signed_date) AS event_date,
                   revocation_reason, revocation_percentage, 'notification' AS origin
            FROM notification
            WHERE verification = 'verified'
              AND notification_type IN ('REFUND', 'REVOKE', 'REFUND_REVERSED', 'REFUND_DECLINED', 'CONSUMPTION_REQUEST')
            UNION ALL
            SELECT 'transaction:' || t.transaction_id AS event_id, t.transaction_id, t.original_transaction_id,
                   CASE WHEN t.revocation_type = 'UPGRADE'
                             AND COALESCE(t.type,
                                          (SELECT MIN(k.type) FROM ref_product k
                                           WHERE k.bundle_id = t.bundle_id AND k.product_id = t.product_id),
                                          'Auto-Renewable Subscription') = 'Auto-Renewable Subscription'
                             THEN 'UPGRADE'
                        WHEN t.revocation_type = 'FAMILY_REVOKE' THEN 'REVOKE'
                        WHEN t.revocation_reason IS NULL AND t.in_app_ownership_type = 'FAMILY_SHARED' THEN 'REVOKE'
                        ELSE 'REFUND' END AS event_type,
                   t.revocation_date AS event_date, t.revocation_reason, t.revocation_percentage,
                   'transaction' AS origin
            FROM apple_transaction t
            WHERE t.revocation_date IS NOT NULL AND t.verification IN ('verified', 'not-signed')
            UNION ALL
            SELECT 'reversal:' || refunded.transaction_id AS event_id, refunded.transaction_id,
                   t.original_transaction_id,
                   'REFUND_REVERSED' AS event_type, t.signed_date AS event_date,
                   CAST(NULL AS INTEGER) AS revocation_reason, CAST(NULL AS INTEGER) AS revocation_percentage,
                   'transaction' AS origin
            FROM (SELECT DISTINCT n.transaction_id FROM notification n
                  WHERE n.notification_type IN ('REFUND', 'REVOKE') AND n.verification = 'verified') refunded
            CROSS JOIN apple_transaction t
            WHERE t.transaction_id = refunded.transaction_id
              AND t.verification = 'verified' AND t.revocation_date IS NULL
              AND t.signed_date > (
                  SELECT MAX(n.signed_date) FROM notification n
                  WHERE n.transaction_id = t.transaction_id AND n.notification_type IN ('REFUND', 'REVOKE')
                    AND n.verification = 'verified');
        """
}
