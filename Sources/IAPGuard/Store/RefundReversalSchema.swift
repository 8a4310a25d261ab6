/// Schema migration 13: the `refunds` view reports a refund that Apple's newest copy shows taken back.
///
/// Apple's newest signed copy of a transaction decides its revocation fields (the store clears them when a
/// newer copy lacks them or a verified REFUND_REVERSED arrives), so the view's transaction half no longer
/// reports a reversed refund. A REFUND or REVOKE *notification* stays in the view as history; when the
/// transaction's verified copy was signed after the latest such notification and carries no revocation, a
/// `REFUND_REVERSED` event with `origin = 'transaction'` (`event_id` `reversal:<transaction id>`, dated
/// when that copy was signed) follows it, so every reader that takes the latest event (IAP-015, IAP-016,
/// the support lookup) sees the refund reversed even when the REFUND_REVERSED notification itself was
/// never received.
///
/// The index on `(notification_type, transaction_id)` serves the new half's lookup of refund
/// notifications. Plain SQL that SQLite and PostgreSQL both run.
enum RefundReversalSchema {
    static let migration = Schema.Migration(version: 13, name: "refunds reversed by a newer copy", sql: sql)

    static let sql = """
        CREATE INDEX IF NOT EXISTS notification_type_transaction ON notification (notification_type, transaction_id);
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
                   CASE WHEN revocation_reason IS NULL AND in_app_ownership_type = 'FAMILY_SHARED' THEN 'REVOKE'
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
