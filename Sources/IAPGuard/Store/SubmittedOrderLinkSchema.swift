/// Schema migration 31: credits linked through the copies Apple sent with their order.
///
/// A client that submits a receipt or signed transaction names the order it pays for in the wrapper
/// (`order_id`, stored as the sighting's `submitted_order_id`). When neither the order nor its credit names
/// the transaction (an order service that keeps only its own ids), that wrapper is the only link between the
/// credit and Apple's purchase: a replay submitted for an accomplice's order was credited under no transaction,
/// and no rule saw it. ``SQLBackedStore/linkCreditsToOrderTransactions(runID:)`` now also gives such a credit
/// the transaction submitted with its order, marked `transaction_from_order = 2`. The index on
/// `submitted_order_id` serves that pass, the scope closure (from a scoped order to the transactions submitted
/// with it), IAP-022 and the lookup; the partial index holds the credits linked that way. A first load builds
/// both after its rows, as the other secondary indexes of these tables. Plain SQL that SQLite and PostgreSQL
/// both run.
enum SubmittedOrderLinkSchema {
    static let migration = Schema.Migration(
        version: 31, name: "credits linked through the copies submitted with their order", sql: sql)

    static let sql = """
        CREATE INDEX apple_sighting_submitted_order ON apple_sighting (submitted_order_id)
            WHERE submitted_order_id IS NOT NULL;
        CREATE INDEX credit_linked_by_submission ON credit (order_id) WHERE transaction_from_order = 2;
        """
}
