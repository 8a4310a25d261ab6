/// Schema migration 18: a notification keeps its whole signed renewal info.
///
/// `notification.renewal_info` holds the decoded payload of `data.signedRenewalInfo` as Apple signed it
/// (JSON text): the renewal's offer (`offerType`, `offerIdentifier`, `offerDiscountType`, `offerPeriod`),
/// `renewalPrice`, `eligibleWinBackOfferIds` and any field Apple adds later, beside the two columns the rules
/// read (`auto_renew_product_id`, `auto_renew_status`). The `notifications` view gains the column. Plain SQL
/// that SQLite and PostgreSQL both run.
enum RenewalInfoSchema {
    static let migration = Schema.Migration(version: 18, name: "notification renewal info", sql: sql)

    static let sql = """
        ALTER TABLE notification ADD COLUMN renewal_info TEXT;
        DROP VIEW notifications;
        CREATE VIEW notifications AS
            SELECT notification_uuid, notification_type, subtype, signed_date, environment, bundle_id,
                   app_apple_id, transaction_id, original_transaction_id, product_id, revocation_date,
                   revocation_reason, revocation_percentage, auto_renew_product_id, auto_renew_status,
                   consumption_request_reason, verification, verification_reason, verification_detail,
                   source_name, source_ref, first_run_id, app_transaction_id, unknown_fields, renewal_info
            FROM notification;
        """
}
