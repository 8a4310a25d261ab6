/// Schema migration 29: the end of a subscription's Billing Grace Period, as a column rules can read.
///
/// When an auto-renewable subscription's renewal charge fails and the app has Billing Grace Period on, Apple
/// keeps the subscriber entitled until `gracePeriodExpiresDate` of the signed renewal info
/// (`JWSRenewalInfoDecodedPayload`, epoch ms) and asks the developer to keep giving service; a backend that
/// keeps entitlement as a ledger of days grants those days as a credit of the last paid transaction. Rules
/// stay within portable SQL (no JSON functions), so `notification.grace_period_expires_date` holds the field,
/// written at ingest (``NotificationParser``) and shown by the `notifications` view.
///
/// Notifications stored before this migration are filled in by ``backfill(_:)`` in the migration's own
/// transaction: their `renewal_info` is read with the parser ingest uses (the text cannot be read portably in
/// SQL alone), so an upgraded store needs no re-ingest. The partial index holds only the notifications that
/// report a grace period, by original transaction, for the rules that look a purchase's grace period up;
/// it costs nothing for the others. The SQL is plain SQL that SQLite and PostgreSQL both run.
enum GracePeriodSchema {
    static let migration = Schema.Migration(
        version: 29, name: "billing grace period expiry", sql: sql, backfill: backfill)

    static let sql = """
        ALTER TABLE notification ADD COLUMN grace_period_expires_date INTEGER;
        CREATE INDEX notification_grace_period ON notification (original_transaction_id, grace_period_expires_date)
            WHERE grace_period_expires_date IS NOT NULL;
        DROP VIEW notifications;
        CREATE VIEW notifications AS
            SELECT notification_uuid, notification_type, subtype, signed_date, environment, bundle_id,
                   app_apple_id, transaction_id, original_transaction_id, product_id, revocation_date,
                   revocation_reason, revocation_percentage, auto_renew_product_id, auto_renew_status,
                   consumption_request_reason, verification, verification_reason, verification_detail,
                   source_name, source_ref, first_run_id, app_transaction_id, unknown_fields, renewal_info,
                   grace_period_expires_date
            FROM notification;
        """

    /// Fills `grace_period_expires_date` of the notifications stored before the column existed from their
    /// `renewal_info`, as ingest reads it (``NotificationParser/gracePeriodExpiresDate(of:)``). A renewal info
    /// whose field is not a whole number stays `NULL` (ingest now quarantines such a record). Only the rows
    /// whose text names the field are read and written.
    @Sendable static func backfill(_ connection: any SQLExecutor) throws {
        let rows = try connection.query(
            "SELECT notification_uuid, renewal_info FROM notification WHERE renewal_info LIKE ?",
            [.text("%\"gracePeriodExpiresDate\"%")])
        for row in rows {
            guard row.count == 2, let uuid = row[0].textValue, let text = row[1].textValue,
                let info = try? JSONObject.parse(Array(text.utf8)),
                let expires = try? NotificationParser.gracePeriodExpiresDate(of: info)
            else { continue }
            try connection.run(
                "UPDATE notification SET grace_period_expires_date = ? WHERE notification_uuid = ?",
                [.integer(expires), .text(uuid)])
        }
    }
}
