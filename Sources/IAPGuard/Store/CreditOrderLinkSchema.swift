/// Schema migration 28: credits that name only their order are linked to the order's transaction.
///
/// Ledgers written by an order service often keep the order id and not Apple's transaction id. Every rule
/// joins credits to purchases by `transaction_id`, so such credits were invisible to them (a retried order
/// credited twice, a Sandbox purchase credited, the wrong product credited). After each ingest
/// ``SQLBackedStore/linkCreditsToOrderTransactions(runID:)`` copies the order's transaction id into the
/// credit and marks it `transaction_from_order`, so that it follows the order if the order changes. The
/// partial indexes hold only the credits without a transaction and the linked ones: nothing for a ledger that
/// names its transactions. Plain SQL that SQLite and PostgreSQL both run.
enum CreditOrderLinkSchema {
    static let migration = Schema.Migration(version: 28, name: "credits linked through their order", sql: sql)

    static let sql = """
        ALTER TABLE credit ADD COLUMN transaction_from_order INTEGER;
        CREATE INDEX credit_unlinked ON credit (order_id) WHERE transaction_id IS NULL;
        CREATE INDEX credit_linked_by_order ON credit (order_id) WHERE transaction_from_order = 1;
        """
}
