/// The shared scope's keys computed in memory (``ScopeBuilder/buildShared(sinceRunID:fxChangedFrom:)``):
/// each lookup reads its rows with the scoped keys bound as parameters, and the keys found are kept in
/// sets, each with the step that first added it. The table is written once at the end, in key order.
///
/// Written as `INSERT … SELECT … WHERE k IN (SELECT scope_key FROM incremental_scope …)`, the same closure
/// spent most of its time inserting: every statement sorted its keys and put them one by one, in random
/// order, into the scope's primary key (1.65 s for a day's 136k keys at 1M, against 0.1 s to read the rows
/// the lookups need). The result is the same key for key: the lookups run in the same order, and each reads
/// the keys as they stood when it started, as a statement reads its table.
struct ScopeClosure {
    /// One lookup: the rows of `table` whose `column` holds a key of kind `by`, and the keys they add.
    struct Lookup {
        var table: String
        var by: ScopeKind
        var column: String
        var outputs: [(kind: ScopeKind, expression: String)]
    }

    /// The keys so far, by kind, each with the step that first added it: 0 while seeding, 1 in the closure
    /// (migration 21's `pass`).
    private(set) var keys: [ScopeKind: [String: Int]] = [:]
    private var pass = 0
    private let database: any SQLExecutor

    init(database: any SQLExecutor) {
        self.database = database
    }

    /// Seeds from the rows changed after `sinceRunID`, then closes over the keys rules relate by, in the three
    /// steps ``ScopeBuilder`` describes.
    mutating func build(sinceRunID: Int64, fxChangedFrom: Int64?) throws {
        pass = 0
        try seed(sinceRunID: sinceRunID, fxChangedFrom: fxChangedFrom)
        pass = 1
        for lookup in Self.fanOut { try add(lookup, addedSinceFirst: false) }
        for lookup in Self.backToTransactions { try add(lookup, addedSinceFirst: false) }
        for lookup in Self.fanOut { try add(lookup, addedSinceFirst: true) }
    }

    /// The keys of each kind that has any, as sets.
    var sets: [ScopeKind: Set<String>] {
        keys.filter { !$0.value.isEmpty }.mapValues { Set($0.keys) }
    }

    // MARK: Lookups

    static let transactionOutputs: [(kind: ScopeKind, expression: String)] = [
        (.originalTransactionID, "original_transaction_id"), (.appAccountToken, "LOWER(app_account_token)"),
        (.appTransactionID, "app_transaction_id"),
    ]
    static let sightingOutputs: [(kind: ScopeKind, expression: String)] = [
        (.originalTransactionID, "original_transaction_id"), (.appAccountToken, "LOWER(app_account_token)"),
        (.receiptKey, "receipt_key"), (.userID, "submitted_by_user_id"), (.orderID, "submitted_order_id"),
    ]
    static let orderOutputs: [(kind: ScopeKind, expression: String)] = [
        (.orderID, "order_id"), (.userID, "user_id"), (.appAccountToken, "LOWER(app_account_token)"),
        (.applicationUsername, "application_username"),
    ]
    static let creditOutputs: [(kind: ScopeKind, expression: String)] = [
        (.creditID, "credit_id"), (.userID, "user_id"), (.orderID, "order_id"),
    ]

    /// Steps 1 and 3: from the transactions to their original ids, tokens, Apple Accounts, sightings, orders
    /// and credits; from orders and credits to the credits of the orders. No lookup here adds a transaction
    /// id, and none adds keys of the kind it looks up by other than the key itself.
    static let fanOut: [Lookup] = [
        Lookup(table: "apple_transaction", by: .transactionID, column: "transaction_id", outputs: transactionOutputs),
        Lookup(table: "apple_sighting", by: .transactionID, column: "transaction_id", outputs: sightingOutputs),
        Lookup(table: "backend_order", by: .transactionID, column: "transaction_id", outputs: orderOutputs),
        Lookup(table: "backend_order", by: .orderID, column: "order_id", outputs: orderOutputs),
        Lookup(table: "credit", by: .transactionID, column: "transaction_id", outputs: creditOutputs),
        Lookup(table: "credit", by: .orderID, column: "order_id", outputs: creditOutputs),
        Lookup(table: "credit", by: .creditID, column: "credit_id", outputs: creditOutputs),
    ]

    /// Step 2: the transactions of scoped orders, credits, original ids and receipts. Each adds transaction ids
    /// only, and none looks up by one.
    static let backToTransactions: [Lookup] = [
        (table: "backend_order", by: ScopeKind.orderID, column: "order_id"),
        (table: "credit", by: .creditID, column: "credit_id"), (table: "credit", by: .orderID, column: "order_id"),
        (table: "apple_transaction", by: .originalTransactionID, column: "original_transaction_id"),
        (table: "apple_sighting", by: .receiptKey, column: "receipt_key"),
        (table: "apple_sighting", by: .originalTransactionID, column: "original_transaction_id"),
    ].map { Lookup(table: $0.table, by: $0.by, column: $0.column, outputs: [(.transactionID, "transaction_id")]) }

    /// Adds what `lookup` finds for the keys of its kind as they stand now (`addedSinceFirst`: only those the
    /// closure added), bound in lists of ``ScopeBuilder/keysPerStatement``.
    private mutating func add(_ lookup: Lookup, addedSinceFirst: Bool) throws {
        let from = (keys[lookup.by] ?? [:]).compactMap { key, pass in !addedSinceFirst || pass >= 1 ? key : nil }
            .sorted()
        let columns = lookup.outputs.map(\.expression).joined(separator: ", ")
        var start = 0
        while start < from.count {
            let chunk = from[start..<min(start + ScopeBuilder.keysPerStatement, from.count)]
            let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            try add(
                lookup.outputs, "SELECT \(columns) FROM \(lookup.table) WHERE \(lookup.column) IN (\(placeholders))",
                chunk.map { .text($0) })
            start += chunk.count
        }
    }

    /// Runs `sql` and adds each row's non-null values as keys of `outputs`' kinds, column by column.
    private mutating func add(
        _ outputs: [(kind: ScopeKind, expression: String)], _ sql: String, _ parameters: [SQLValue]
    )
        throws
    {
        for row in try database.query(sql, parameters) {
            for (column, output) in outputs.enumerated() {
                guard let key = row[column].textValue else { continue }
                add(output.kind, key)
            }
        }
    }

    private mutating func add(_ kind: ScopeKind, _ key: String) {
        if keys[kind]?[key] == nil { keys[kind, default: [:]][key] = pass }
    }

    // MARK: Seeds

    /// Keys of every row changed after run `sinceRunID`, the old values of changed key fields, and the rows
    /// dated from the earliest changed FX rate on.
    private mutating func seed(sinceRunID: Int64, fxChangedFrom: Int64?) throws {
        let run: [SQLValue] = [.integer(sinceRunID)]
        let changed: [(body: String, outputs: [(kind: ScopeKind, expression: String)])] = [
            ("apple_transaction WHERE last_run_id > ?", [(.transactionID, "transaction_id")] + Self.transactionOutputs),
            ("apple_sighting WHERE first_run_id > ?", [(.transactionID, "transaction_id")] + Self.sightingOutputs),
            ("backend_order WHERE last_run_id > ?", Self.orderOutputs + [(.transactionID, "transaction_id")]),
            ("credit WHERE last_run_id > ?", Self.creditOutputs + [(.transactionID, "transaction_id")]),
            (
                "notification WHERE first_run_id > ?",
                [(.transactionID, "transaction_id"), (.originalTransactionID, "original_transaction_id")]
            ),
            // A changed account decides its own home country and the owner of its token and username: its
            // purchases and every purchase carrying the token or username follow in step 2.
            (
                "user_account WHERE last_run_id > ?",
                [
                    (.userID, "user_id"), (.appAccountToken, "LOWER(app_account_token)"),
                    (.applicationUsername, "application_username"),
                ]
            ),
        ]
        for (body, outputs) in changed {
            try add(outputs, "SELECT \(outputs.map(\.expression).joined(separator: ", ")) FROM \(body)", run)
        }
        // What a changed row related to before the change (an order moved to another user, …).
        let placeholders = Array(repeating: "?", count: Self.changedFields.count).joined(separator: ", ")
        for row in try database.query(
            """
            SELECT entity, field, old_value, LOWER(old_value) FROM change_log
            WHERE run_id > ? AND entity || '.' || field IN (\(placeholders))
            """, run + Self.changedFields.keys.sorted().map { .text($0) })
        {
            guard let entity = row[0].textValue, let field = row[1].textValue,
                let (kind, lower) = Self.changedFields["\(entity).\(field)"],
                let key = row[lower ? 3 : 2].textValue
            else { continue }
            add(kind, key)
        }
        if let from = fxChangedFrom {
            let at: [SQLValue] = [.integer(from)]
            try add(
                [(.transactionID, "transaction_id")],
                "SELECT transaction_id FROM apple_transaction WHERE purchase_date >= ?", at)
            try add(
                [(.creditID, "credit_id"), (.transactionID, "transaction_id")],
                "SELECT credit_id, transaction_id FROM credit WHERE credited_at >= ?", at)
        }
    }

    /// The key fields whose old values (`change_log`) seed the scope: `entity.field` to the kind, and whether
    /// the value is compared lower-cased.
    static let changedFields: [String: (kind: ScopeKind, lower: Bool)] = [
        "transaction.original_transaction_id": (.originalTransactionID, false),
        "transaction.app_account_token": (.appAccountToken, true),
        "transaction.app_transaction_id": (.appTransactionID, false),
        "order.user_id": (.userID, false), "order.transaction_id": (.transactionID, false),
        "order.app_account_token": (.appAccountToken, true),
        "order.application_username": (.applicationUsername, false),
        "credit.transaction_id": (.transactionID, false), "credit.order_id": (.orderID, false),
        "credit.user_id": (.userID, false),
        "user.app_account_token": (.appAccountToken, true),
        "user.application_username": (.applicationUsername, false),
    ]
}
