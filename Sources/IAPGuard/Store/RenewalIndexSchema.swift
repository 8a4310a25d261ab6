/// Schema migration 25: the renewals (later transactions of a subscription: `original_transaction_id` differs
/// from `transaction_id`), found through a partial index instead of by reading every transaction.
///
/// IAP-014 asks, on every evaluation and over the whole store, how each app's backend credits renewals: some
/// credit each period, others credit a subscription once and keep it by its expiry. Renewals are a small share
/// of the purchases; without an index a daily run would read every transaction to count them. The index holds
/// only the rows whose original differs (renewals, restores, upgrades and Family Sharing copies), costs nothing
/// to keep up for first purchases, and a query that says `original_transaction_id <> transaction_id` in so
/// many words (SQLite and PostgreSQL both match a partial index's condition against the query's own terms)
/// reads it. The first load builds it after the rows, like the table's other indexes.
///
/// Plain SQL that SQLite and PostgreSQL both run.
enum RenewalIndexSchema {
    static let migration = Schema.Migration(version: 25, name: "renewals by app", sql: sql)

    static let sql = """
        CREATE INDEX apple_transaction_renewal ON apple_transaction (bundle_id)
            WHERE original_transaction_id <> transaction_id;
        """
}
