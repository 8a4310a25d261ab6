/// The clawback ledger rows (negative units) of one account for one transaction, or for one order when they
/// name no transaction: what they take back, and which of the account's credits that covers.
///
/// An append-only ledger takes a refund back by a new entry, not by editing the grant. The entries cover the
/// account's standing credits of the same transaction (or order) granted before the latest entry only when
/// they take back at least those credits' units: a partial clawback (the user had spent some) leaves the
/// credits standing, so IAP-015 still reports what was kept. A credit granted after the entries (bought or
/// granted again) is not covered.
struct CreditClawback: Sendable, Equatable {
    /// The account the units were taken from.
    var userID: String
    /// The transaction the entries name, nil when they name only an order.
    var transactionID: String?
    /// The order they name (the key when they name no transaction; else where to look when no credit names
    /// the transaction).
    var orderID: String?
    /// Units taken back by all the entries (positive).
    var units: Int64 = 0
    /// The latest entry's time: credits granted until then are covered.
    var at: Int64 = 0
    /// The latest entry's id and reason, written to the credits it reverses.
    var latestID = ""
    var latestReason: String?

    /// A standing credit of the group.
    struct Grant: Sendable, Equatable {
        var creditID: String
        var units: Int64
        var creditedAt: Int64
    }

    /// Groups clawback rows (`credit_id, transaction_id, order_id, user_id, units, credited_at,
    /// reversal_reason`), in a stable order.
    static func groups(_ rows: [[SQLValue]]) -> [CreditClawback] {
        var byKey: [String: CreditClawback] = [:]
        for row in rows {
            guard let id = row[0].textValue, let user = row[3].textValue, let units = row[4].integerValue,
                units < 0
            else { continue }
            let transaction = row[1].textValue
            let order = row[2].textValue
            guard transaction != nil || order != nil else { continue }
            let key = transaction.map { "\(user)\u{1}t\($0)" } ?? "\(user)\u{1}o\(order ?? "")"
            var group = byKey[key] ?? CreditClawback(userID: user, transactionID: transaction, orderID: order)
            if group.orderID == nil { group.orderID = order }
            group.units += -units
            let at = row[5].integerValue ?? 0
            if group.latestID.isEmpty || at > group.at || (at == group.at && id > group.latestID) {
                group.at = at
                group.latestID = id
                group.latestReason = row[6].textValue
            }
            byKey[key] = group
        }
        return byKey.keys.sorted().compactMap { byKey[$0] }
    }

    /// The grants among `standing` this group reverses: those granted until ``at``, when the group takes
    /// back at least their units; none otherwise.
    ///
    /// A correction written in one go, the clawback and a new grant stamped with the same millisecond (500
    /// taken back, 550 granted instead), has the new grant follow the clawback: when the grants until ``at``
    /// are more than it takes back, those strictly before it are tried.
    func covered(_ standing: [Grant]) -> [Grant] {
        func takenBack(_ grants: [Grant]) -> Bool {
            !grants.isEmpty && grants.reduce(0, { $0 + $1.units }) <= units
        }
        let until = standing.filter { $0.creditedAt <= at }
        if takenBack(until) { return until }
        let before = until.filter { $0.creditedAt < at }
        return before.count < until.count && takenBack(before) ? before : []
    }

    /// The reason written to a reversed credit: the entry's own reason and its id.
    var reason: String { "\(latestReason ?? "clawback") (ledger row \(latestID))" }
}

extension SQLBackedStore {
    /// Marks reversed, at the latest clawback's time, the standing credits that clawback ledger rows
    /// (``CreditClawbackSchema``) take back in full (``CreditClawback``); each change is logged and the credit
    /// marked changed in `runID`, so incremental rules see it. Idempotent: a reversed credit is left alone.
    /// Runs after every ingest, whichever arrived first, the credit or its clawback. Returns how many
    /// credits it reversed.
    @discardableResult
    public func applyCreditClawbacks(runID: Int64) throws -> Int {
        try inTransaction {
            let rows = try connection.query(
                """
                SELECT credit_id, transaction_id, order_id, user_id, units, credited_at, reversal_reason
                FROM credit_clawback
                """, [])
            var reversed = 0
            func standing(_ column: String, _ key: String, _ user: String, also: String = "") throws
                -> [CreditClawback.Grant]
            {
                try connection.query(
                    """
                    SELECT credit_id, units, credited_at FROM credit
                    WHERE \(column) = ? AND user_id = ? AND reversed_at IS NULL\(also)
                    """, [.text(key), .text(user)]
                ).compactMap { row in
                    guard let id = row[0].textValue else { return nil }
                    return CreditClawback.Grant(
                        creditID: id, units: row[1].integerValue ?? 0, creditedAt: row[2].integerValue ?? 0)
                }
            }
            for group in CreditClawback.groups(rows) {
                var grants: [CreditClawback.Grant] = []
                if let transaction = group.transactionID {
                    grants = try standing("transaction_id", transaction, group.userID)
                }
                if grants.isEmpty, let order = group.orderID {
                    // Credits of the order; when the clawback names a transaction, only those that name none.
                    grants = try standing(
                        "order_id", order, group.userID,
                        also: group.transactionID == nil ? "" : " AND transaction_id IS NULL")
                }
                for grant in group.covered(grants) {
                    try connection.run(
                        "UPDATE credit SET reversed_at = ?, reversal_reason = ?, last_run_id = ? WHERE credit_id = ?",
                        [.integer(group.at), .text(group.reason), .integer(runID), .text(grant.creditID)])
                    try logChange(
                        runID: runID, entity: "credit", key: grant.creditID, field: "reversed_at", old: .null,
                        new: .integer(group.at))
                    reversed += 1
                }
            }
            return reversed
        }
    }
}
