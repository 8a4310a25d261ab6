/// Schema migration 30: the `clawbacks` view, the clawback ledger rows (``CreditClawbackSchema``) as rules
/// read them.
///
/// The store reverses the credits a clawback takes back in full; a partial one (fewer units than the grants
/// it follows) leaves them standing. IAP-015 reads what such a row took back: after a prorated refund an
/// append-only ledger takes back the refunded share by a row of its own, and the rest rightly stays. Units
/// are negative, as the ledger wrote them. Plain SQL that SQLite and PostgreSQL both run.
enum ClawbackViewSchema {
    static let migration = Schema.Migration(version: 30, name: "clawbacks view", sql: sql)

    static let sql = """
        CREATE VIEW clawbacks AS
            SELECT credit_id, transaction_id, order_id, user_id, product_id, units, credited_at, reversal_reason,
                   source_name, source_ref
            FROM credit_clawback;
        """
}
