/// Schema migration 24: a subscription Apple ended early because the user upgraded it is an `UPGRADE` event
/// in the `refunds` view, not a `REFUND`.
///
/// Apple sets a legacy receipt's `cancellation_date` both when it refunds and when the user upgrades the
/// subscription (`is_upgraded` tells them apart), and a signed transaction may carry `isUpgraded` with a
/// revocation date. Ingest labels such a transaction's `revocation_type` `UPGRADE`
/// (``AppleTransaction/upgradeRevocationType``); the rules count refunds by `event_type` (`REFUND`, `REVOKE`),
/// so an upgrade is no longer a refund that was never clawed back, nor one more refund of a habitual refunder.
/// The lookup still shows it. The view is otherwise as migration 22 left it. Plain SQL that SQLite and
/// PostgreSQL both run.
enum UpgradeEventSchema {
    static let migration = Schema.Migration(version: 24, name: "subscription upgrades are not refunds", sql: sql)

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
            SELECT 'transaction:' || transaction_id AS event_id, transaction_id, original_transaction_id,
                   CASE WHEN revocation_type = 'UPGRADE' THEN 'UPGRADE'
                        WHEN revocation_type = 'FAMILY_REVOKE' THEN 'REVOKE'
                        WHEN revocation_reason IS NULL AND in_app_ownership_type = 'FAMILY_SHARED' THEN 'REVOKE'
                        ELSE 'REFUND' END AS event_type,
                   revocation_date AS event_date, revocation_reason, revocation_percentage,
                   'transaction' AS origin
            FROM apple_transaction
            WHERE revocation_date IS NOT NULL AND verification IN ('verified', 'not-signed')
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
