/// Schema migration 16: the terms a signed transaction was bought on, and what Apple signed that iapguard
/// does not model yet.
///
/// `apple_transaction` and `apple_sighting` gain the offer (`offer_type`, `offer_identifier`,
/// `offer_discount_type`, `offer_period`), the billing plan (`billing_plan_type`, and `commitment_info` as
/// JSON text), `advanced_commerce_info` (JSON text: items, their refunds and revocations) and
/// `unknown_fields` (a JSON object of the payload's members outside Apple's documented schema);
/// `notification` gains `unknown_fields` too. The `transactions`, `sightings` and `notifications` views are
/// recreated with every column they had plus these. Plain SQL that SQLite and PostgreSQL both run.
enum PurchaseTermsSchema {
    static let migration = Schema.Migration(version: 16, name: "offers, billing plans and unknown fields", sql: sql)

    /// The added columns, in table order (also their order in the views).
    static let columns: [(name: String, type: String)] = [
        ("offer_type", "INTEGER"), ("offer_identifier", "TEXT"), ("offer_discount_type", "TEXT"),
        ("offer_period", "TEXT"), ("billing_plan_type", "TEXT"), ("commitment_info", "TEXT"),
        ("advanced_commerce_info", "TEXT"), ("unknown_fields", "TEXT"),
    ]

    static let sql: String = {
        let added = columns.map(\.name).joined(separator: ", ")
        let alters = ["apple_transaction", "apple_sighting"].flatMap { table in
            columns.map { "ALTER TABLE \(table) ADD COLUMN \($0.name) \($0.type);" }
        }
        return alters.joined(separator: "\n") + """

            ALTER TABLE notification ADD COLUMN unknown_fields TEXT;

            DROP VIEW transactions;
            CREATE VIEW transactions AS
                SELECT transaction_id, original_transaction_id, web_order_line_item_id, bundle_id, product_id,
                       type, quantity, purchase_date, original_purchase_date, expires_date, environment,
                       storefront, currency, price, app_account_token, in_app_ownership_type, transaction_reason,
                       revocation_date, revocation_reason, revocation_type, revocation_percentage, signed_date,
                       source_kind, verification, sighting_count, conflict_count, first_run_id, last_run_id,
                       app_transaction_id, \(added)
                FROM apple_transaction;
            DROP VIEW sightings;
            CREATE VIEW sightings AS
                SELECT sighting_id, transaction_id, original_transaction_id, web_order_line_item_id, bundle_id,
                       product_id, type, quantity, purchase_date, original_purchase_date, expires_date, environment,
                       storefront, currency, price, app_account_token, in_app_ownership_type, transaction_reason,
                       revocation_date, revocation_reason, revocation_type, revocation_percentage, signed_date,
                       source_kind, source_name, source_ref, payload_hash, receipt_key, receipt_status,
                       submitted_by_user_id, submitted_order_id, received_at, verification, verification_reason,
                       verification_detail, anomalies, first_run_id, app_transaction_id, \(added)
                FROM apple_sighting;
            DROP VIEW notifications;
            CREATE VIEW notifications AS
                SELECT notification_uuid, notification_type, subtype, signed_date, environment, bundle_id,
                       app_apple_id, transaction_id, original_transaction_id, product_id, revocation_date,
                       revocation_reason, revocation_percentage, auto_renew_product_id, auto_renew_status,
                       consumption_request_reason, verification, verification_reason, verification_detail,
                       source_name, source_ref, first_run_id, app_transaction_id, unknown_fields
                FROM notification;
            """
    }()
}
