/// A credit that names its order but no transaction, and the transaction the order names: whether the
/// credit may take that transaction id (``CreditOrderLinkSchema``).
///
/// One order is one payment, so every credit of it is a credit of the order's transaction (a retry that
/// credited an order twice is then IAP-001's duplicate). The exception is a subscription: a backend that keeps
/// one order per subscription writes each renewal's credit against that order, and those credits belong to
/// renewals the order does not name; they are linked only while the order has a single credit.
struct CreditOrderLink: Sendable, Equatable {
    var creditID: String
    var transactionID: String
    /// `type` of the order's transaction (its own, else the catalog's), if known.
    var productType: String?
    /// How many credits name the order.
    var creditsOfOrder: Int

    /// Whether the credit takes the order's transaction id.
    var links: Bool { productType != "Auto-Renewable Subscription" || creditsOfOrder <= 1 }
}

extension SQLBackedStore {
    /// Gives each credit that names an order but no transaction the transaction its order names (see
    /// ``CreditOrderLink``), marked `transaction_from_order` so that it follows later changes of the order;
    /// a later export of the credit that names a transaction itself ends the link. When the order names no
    /// transaction either, the credit takes the one submitted with the order (``SubmittedOrderCopy``, marked
    /// `transaction_from_order = 2`), until the order names one. Each changed credit is
    /// marked changed in `runID` (so incremental rules see it); a replaced transaction id is logged, so the
    /// one it had is evaluated again. Linked credits are followed only when their order changed this run; every
    /// credit still unlinked whose order names a transaction, or has a copy submitted with it, is looked at
    /// (through a partial index of the unlinked credits), so rows stored before the store could link them are
    /// linked too. Returns how many credits it linked or re-linked.
    @discardableResult
    public func linkCreditsToOrderTransactions(runID: Int64) throws -> Int {
        try inTransaction {
            let run = SQLValue.integer(runID)
            // The export named a transaction itself (the writer logged it): the credit is no longer linked.
            for row in try connection.query(
                """
                SELECT l.entity_key FROM change_log l
                WHERE l.run_id = ? AND l.entity = 'credit' AND l.field = 'transaction_id' AND l.new_value IS NOT NULL
                """, [run])
            {
                guard let id = row[0].textValue else { continue }
                try connection.run(
                    """
                    UPDATE credit SET transaction_from_order = NULL
                    WHERE credit_id = ? AND transaction_from_order IS NOT NULL
                    """, [.text(id)])
            }
            var changed = 0
            // Linked credits follow their order when it changed this run (skipped while nothing is linked: a
            // first load changes every order).
            if try !connection.query("SELECT 1 FROM credit WHERE transaction_from_order = 1 LIMIT 1", []).isEmpty
                || !connection.query("SELECT 1 FROM credit WHERE transaction_from_order = 2 LIMIT 1", []).isEmpty
            {
                for row in try connection.query(
                    """
                    SELECT c.credit_id, c.transaction_id, o.transaction_id, c.transaction_from_order
                    FROM backend_order o JOIN credit c ON c.order_id = o.order_id
                    WHERE o.last_run_id = ? AND c.transaction_from_order IN (1, 2)
                    """, [run])
                {
                    guard let id = row[0].textValue, row[1] != row[2] else { continue }
                    // A credit linked through a submitted copy keeps it until the order names a transaction.
                    if row[3].integerValue == 2, row[2].textValue == nil { continue }
                    try connection.run(
                        "UPDATE credit SET transaction_id = ?, transaction_from_order = 1, last_run_id = ? WHERE credit_id = ?",
                        [row[2], run, .text(id)])
                    try logChange(
                        runID: runID, entity: "credit", key: id, field: "transaction_id", old: row[1], new: row[2])
                    changed += 1
                }
            }
            let candidates = try connection.query(
                """
                SELECT c.credit_id, o.transaction_id,
                       (SELECT COALESCE(t.type, k.type) FROM apple_transaction t
                        LEFT JOIN ref_product k ON k.bundle_id = t.bundle_id AND k.product_id = t.product_id
                        WHERE t.transaction_id = o.transaction_id),
                       (SELECT COUNT(*) FROM credit c2 WHERE c2.order_id = c.order_id)
                FROM credit c JOIN backend_order o ON o.order_id = c.order_id
                WHERE c.transaction_id IS NULL AND c.order_id IS NOT NULL AND o.transaction_id IS NOT NULL
                """, []
            ).compactMap { row -> CreditOrderLink? in
                guard let id = row[0].textValue, let transaction = row[1].textValue else { return nil }
                return CreditOrderLink(
                    creditID: id, transactionID: transaction, productType: row[2].textValue,
                    creditsOfOrder: Int(row[3].integerValue ?? 0))
            }
            for link in candidates where link.links {
                changed += try connection.run(
                    """
                    UPDATE credit SET transaction_id = ?, transaction_from_order = 1, last_run_id = ?
                    WHERE credit_id = ? AND transaction_id IS NULL
                    """, [.text(link.transactionID), run, .text(link.creditID)])
            }
            for link in try submittedOrderLinks() where link.links {
                changed += try connection.run(
                    """
                    UPDATE credit SET transaction_id = ?, transaction_from_order = 2, last_run_id = ?
                    WHERE credit_id = ? AND transaction_id IS NULL
                    """, [.text(link.transactionID), run, .text(link.creditID)])
            }
            return changed
        }
    }

    /// The links of the credits that name an order but no transaction, whose order names none either, to the
    /// transaction submitted with the order (``SubmittedOrderCopy/transaction(of:product:createdAt:)``); the
    /// credits whose order has no such single transaction are left out.
    func submittedOrderLinks() throws -> [CreditOrderLink] {
        let credits = try connection.query(
            """
            SELECT c.credit_id, c.order_id, o.product_id, o.created_at,
                   (SELECT COUNT(*) FROM credit c2 WHERE c2.order_id = c.order_id)
            FROM credit c JOIN backend_order o ON o.order_id = c.order_id
            WHERE c.transaction_id IS NULL AND c.order_id IS NOT NULL AND o.transaction_id IS NULL
              AND EXISTS (SELECT 1 FROM apple_sighting s WHERE s.submitted_order_id = c.order_id)
            """, [])
        var copiesOfOrder: [String: [SubmittedOrderCopy]] = [:]
        var links: [CreditOrderLink] = []
        for row in credits {
            guard let id = row[0].textValue, let orderID = row[1].textValue else { continue }
            if copiesOfOrder[orderID] == nil {
                copiesOfOrder[orderID] = try connection.query(
                    """
                    SELECT transaction_id, product_id, verification, purchase_date FROM apple_sighting
                    WHERE submitted_order_id = ?
                    """, [.text(orderID)]
                ).compactMap { copy in
                    copy[0].textValue.map {
                        SubmittedOrderCopy(
                            transactionID: $0, productID: copy[1].textValue, failed: copy[2].textValue == "failed",
                            purchaseDate: copy[3].integerValue)
                    }
                }
            }
            guard
                let transaction = SubmittedOrderCopy.transaction(
                    of: copiesOfOrder[orderID] ?? [], product: row[2].textValue, createdAt: row[3].integerValue)
            else { continue }
            let type = try connection.query(
                """
                SELECT COALESCE(t.type, k.type) FROM apple_transaction t
                LEFT JOIN ref_product k ON k.bundle_id = t.bundle_id AND k.product_id = t.product_id
                WHERE t.transaction_id = ?
                """, [.text(transaction)]
            ).first?.first?.textValue
            links.append(
                CreditOrderLink(
                    creditID: id, transactionID: transaction, productType: type,
                    creditsOfOrder: Int(row[4].integerValue ?? 0)))
        }
        return links
    }
}
