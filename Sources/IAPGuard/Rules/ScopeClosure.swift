/// The shared scope's keys computed in memory (``ScopeBuilder/buildShared(sinceRunID:fxChangedFrom:)``):
/// each lookup reads its rows with the scoped keys bound as parameters, and the keys found are kept in
/// sets, each with the step that first added it. The table is written once at the end, in key order.
///
/// Written as `INSERT … SELECT … WHERE k IN (SELECT scope_key FROM incremental_scope …)`, the same closure
/// spent most of its time inserting: every statement sorted its keys and put them one by one, in random
/// order, into the scope's primary key (at 1M, the statement seeding from a day's sightings took 162 ms, its
/// `SELECT` alone 23 ms). The result is the same key for key: the lookups run in the same order, and each
/// reads the keys as they stood when it started, as a statement reads its table.
struct ScopeClosure {
    /// One lookup: the rows of `table` whose column of kind `by` holds a scoped key, and the kinds of keys
    /// they add (columns from ``shapes``).
    struct Lookup {
        var table: String
        var by: ScopeKind
        var outputs: [ScopeKind]

        /// The column looked up by.
        var column: String { ScopeClosure.expression(table, by) }
        /// The outputs with their columns.
        var outputColumns: [(kind: ScopeKind, expression: String)] {
            outputs.map { ($0, ScopeClosure.expression(table, $0)) }
        }
    }

    /// The keys so far, by kind, each with the step that first added it: 0 while seeding, 1 in the closure
    /// (migration 21's `pass`).
    private(set) var keys: [ScopeKind: [String: Int]] = [:]
    private var pass = 0
    private let database: any SQLExecutor
    /// The rows read so far of the tables several lookups read (``rememberedTables``).
    private var remembered: [String: RememberedRows] = [:]

    /// Rows of one table already read, in ``ScopeClosure/shapes`` order: by primary key (the first column), and
    /// by the keys already looked up by a column, all the rows found for each (none included). The store does
    /// not change while the closure is built, so a lookup reads only the keys these do not answer (the seeds
    /// read most of the changed purchases, orders and credits; step 2 looks up again the orders and credits
    /// step 1 did): a day's closure at 1M took 0.79–0.90 s instead of 0.89–1.01 s.
    private struct RememberedRows {
        var byPrimaryKey: [String: [String?]] = [:]
        var byLookup: [ScopeKind: [String: [[String?]]]] = [:]
    }

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
        // The rows read are as many as the keys: not kept while the keys are written and handed on.
        remembered = [:]
    }

    /// The keys of each kind that has any, as sets.
    var sets: [ScopeKind: Set<String>] {
        keys.filter { !$0.value.isEmpty }.mapValues { Set($0.keys) }
    }

    // MARK: Lookups

    /// The columns the closure reads from each table it looks rows up in, one per kind, the primary key first.
    static let shapes: [String: [(kind: ScopeKind, expression: String)]] = [
        "apple_transaction": [
            (.transactionID, "transaction_id"), (.originalTransactionID, "original_transaction_id"),
            (.appAccountToken, "LOWER(app_account_token)"), (.appTransactionID, "app_transaction_id"),
        ],
        "apple_sighting": [
            (.transactionID, "transaction_id"), (.originalTransactionID, "original_transaction_id"),
            (.appAccountToken, "LOWER(app_account_token)"), (.receiptKey, "receipt_key"),
            (.userID, "submitted_by_user_id"), (.orderID, "submitted_order_id"),
        ],
        "backend_order": [
            (.orderID, "order_id"), (.userID, "user_id"), (.transactionID, "transaction_id"),
            (.appAccountToken, "LOWER(app_account_token)"), (.applicationUsername, "application_username"),
        ],
        "credit": [
            (.creditID, "credit_id"), (.transactionID, "transaction_id"), (.orderID, "order_id"),
            (.userID, "user_id"),
        ],
    ]

    /// The tables whose rows several lookups read, remembered (``RememberedRows``); the first column of their
    /// shape is their primary key. (A sighting is looked up once per key and column.)
    static let rememberedTables: Set<String> = ["apple_transaction", "backend_order", "credit"]

    static func expression(_ table: String, _ kind: ScopeKind) -> String {
        shapes[table]?.first { $0.kind == kind }?.expression ?? kind.rawValue
    }

    /// Steps 1 and 3: from the transactions to their original ids, tokens, Apple Accounts, sightings, orders
    /// and credits; from orders and credits to the credits of the orders. No lookup here adds a transaction
    /// id, and none adds keys of the kind it looks up by other than the key itself.
    static let fanOut: [Lookup] = [
        Lookup(
            table: "apple_transaction", by: .transactionID,
            outputs: [.originalTransactionID, .appAccountToken, .appTransactionID]),
        Lookup(
            table: "apple_sighting", by: .transactionID,
            outputs: [.originalTransactionID, .appAccountToken, .receiptKey, .userID, .orderID]),
        Lookup(
            table: "backend_order", by: .transactionID,
            outputs: [.orderID, .userID, .appAccountToken, .applicationUsername]),
        Lookup(
            table: "backend_order", by: .orderID, outputs: [.orderID, .userID, .appAccountToken, .applicationUsername]),
        Lookup(table: "credit", by: .transactionID, outputs: [.creditID, .userID, .orderID]),
        Lookup(table: "credit", by: .orderID, outputs: [.creditID, .userID, .orderID]),
        Lookup(table: "credit", by: .creditID, outputs: [.creditID, .userID, .orderID]),
    ]

    /// Step 2: the transactions of scoped orders (named by the order, or submitted with it: the copy's
    /// `submitted_order_id`, through which an order naming no transaction is paid), credits, original ids and
    /// receipts. Each adds transaction ids only, and none looks up by one.
    static let backToTransactions: [Lookup] = [
        ("backend_order", ScopeKind.orderID), ("apple_sighting", .orderID), ("credit", .creditID),
        ("credit", .orderID), ("apple_transaction", .originalTransactionID), ("apple_sighting", .receiptKey),
        ("apple_sighting", .originalTransactionID),
    ].map { Lookup(table: $0.0, by: $0.1, outputs: [.transactionID]) }

    /// Adds what `lookup` finds for the keys of its kind as they stand now (`addedSinceFirst`: only those the
    /// closure added): from the rows remembered when they answer, else read (``bodies(_:keys:)``).
    private mutating func add(_ lookup: Lookup, addedSinceFirst: Bool) throws {
        guard let shape = Self.shapes[lookup.table], let byColumn = shape.firstIndex(where: { $0.kind == lookup.by })
        else { return }
        let outputs = lookup.outputs.compactMap { kind in shape.firstIndex { $0.kind == kind }.map { (kind, $0) } }
        let from = (keys[lookup.by] ?? [:]).compactMap { key, pass in !addedSinceFirst || pass >= 1 ? key : nil }
            .sorted()
        let remembers = Self.rememberedTables.contains(lookup.table)
        var unread: [String] = []
        for key in from {
            if remembers, let rows = answer(lookup, key: key, byPrimaryKey: byColumn == 0) {
                for row in rows { add(row, outputs) }
            } else {
                unread.append(key)
            }
        }
        for body in Self.bodies(lookup, keys: unread) {
            var found: [String: [[String?]]] = [:]
            for values in try database.query(body.sql, body.parameters) {
                let row = values.map(\.textValue)
                add(row, outputs)
                if remembers, let key = row[byColumn] { found[key, default: []].append(row) }
            }
            if remembers {
                for key in body.parameters.compactMap(\.textValue) {
                    remember(lookup, key: key, rows: found[key] ?? [])
                }
            }
        }
    }

    /// The statements reading the rows `lookup` needs for `keys`, every column of the table's shape, the keys
    /// bound in lists (``ScopeBuilder/boundBodies(table:where:keys:)``).
    static func bodies(_ lookup: Lookup, keys: [String]) -> [ScopeBuilder.Body] {
        let columns = (shapes[lookup.table] ?? []).map(\.expression).joined(separator: ", ")
        return ScopeBuilder.boundBodies(table: lookup.table, where: lookup.column, keys: keys).map {
            ScopeBuilder.Body(sql: "SELECT \(columns) FROM \($0.sql)", parameters: $0.parameters)
        }
    }

    /// The rows of `lookup`'s table for `key` when remembered whole: the row of that primary key, or every row
    /// an earlier lookup by the same column found.
    private func answer(_ lookup: Lookup, key: String, byPrimaryKey: Bool) -> [[String?]]? {
        guard let table = remembered[lookup.table] else { return nil }
        if byPrimaryKey, let row = table.byPrimaryKey[key] { return [row] }
        return table.byLookup[lookup.by]?[key]
    }

    private mutating func remember(_ lookup: Lookup, key: String, rows: [[String?]]) {
        remembered[lookup.table, default: RememberedRows()].byLookup[lookup.by, default: [:]][key] = rows
        remember(lookup.table, rows)
    }

    private mutating func remember(_ table: String, _ rows: [[String?]]) {
        for row in rows {
            guard let primaryKey = row.first ?? nil else { continue }
            remembered[table, default: RememberedRows()].byPrimaryKey[primaryKey] = row
        }
    }

    /// Adds `row`'s non-null values at `outputs` (kind, index) as keys.
    private mutating func add(_ row: [String?], _ outputs: [(kind: ScopeKind, index: Int)]) {
        for (kind, index) in outputs {
            if let key = row[index] { add(kind, key) }
        }
    }

    /// Runs `sql` and adds each row's non-null values as keys of `outputs`' kinds, column by column.
    private mutating func add(
        _ outputs: [(kind: ScopeKind, expression: String)], _ sql: String, _ parameters: [SQLValue]
    ) throws {
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
        // The changed purchases, orders and credits: every column of their shape is a key, and the rows are
        // remembered for the lookups by primary key.
        for (table, changed) in [
            ("apple_transaction", "last_run_id"), ("apple_sighting", "first_run_id"), ("backend_order", "last_run_id"),
            ("credit", "last_run_id"),
        ] {
            guard let shape = Self.shapes[table] else { continue }
            let outputs = shape.enumerated().map { ($1.kind, $0) }
            var rows: [[String?]] = []
            for values in try database.query(
                "SELECT \(shape.map(\.expression).joined(separator: ", ")) FROM \(table) WHERE \(changed) > ?", run)
            {
                let row = values.map(\.textValue)
                add(row, outputs)
                rows.append(row)
            }
            if Self.rememberedTables.contains(table) { remember(table, rows) }
        }
        let changed: [(body: String, outputs: [(kind: ScopeKind, expression: String)])] = [
            (
                "notification WHERE first_run_id > ?",
                [(.transactionID, "transaction_id"), (.originalTransactionID, "original_transaction_id")]
            ),
            // A clawback ledger row (kept apart from the credits) changes what stands of its transaction.
            (
                "credit_clawback WHERE last_run_id > ?",
                [(.transactionID, "transaction_id"), (.orderID, "order_id"), (.userID, "user_id")]
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
