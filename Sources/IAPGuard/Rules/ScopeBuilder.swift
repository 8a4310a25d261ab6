import Foundation

/// Computes the shared dirty scope of an incremental rule stage in SQL, into `incremental_scope` (rule_id
/// `''`), on any SQL-backed store (plain `INSERT … SELECT`; no temporary tables or engine-only functions).
/// Every statement is an index lookup (`ScopePlanTests`); lookups by `LOWER(app_account_token)` bind the
/// scoped tokens as a parameter list, the one form SQLite uses that expression index for.
///
/// Seeds are the keys of every row changed after run `sinceRunID` — transactions, orders, credits and
/// accounts whose `last_run_id` is later, sightings and notifications whose `first_run_id` is later, and the old
/// values of changed key fields from `change_log` — plus, when FX rates changed, the transactions and
/// credits dated on or after the earliest changed rate. The seeds are then closed over the keys rules
/// relate by, in three steps:
///
/// 1. fan out from the transactions: their original ids, tokens and Apple Accounts (`app_transaction_id`),
///    their sightings' receipts, submitters
///    and submitted orders, their orders (id, owner, token, username) and their credits (id, user, order),
///    and the credits of scoped orders;
/// 2. back to transactions: those of scoped orders, credits, original ids, tokens, Apple Accounts,
///    usernames, receipts and users (a user's other purchases);
/// 3. fan out again as in 1, from the keys added since step 1 started: every lookup is one key at a time,
///    so what the keys step 1 started with lead to is in the scope already.
///
/// So a new refund for transaction T scopes T, its original id, the users credited for it and the owners
/// of its orders (step 1), their other purchases (step 2) and those purchases' orders and credits (step 3).
public struct ScopeBuilder {
    public let database: any SQLExecutor
    /// The step keys are added by: 0 while seeding, 1 in the closure (migration 21's `pass`).
    private let step = Step()

    private final class Step {
        var pass = 0
    }

    public init(database: any SQLExecutor) {
        self.database = database
    }

    /// Replaces the shared scope with the rows changed after `sinceRunID`, closed (see the type). Returns
    /// the number of keys by kind.
    @discardableResult
    public func build(sinceRunID: Int64, fxChangedFrom: Int64?) throws -> [ScopeKind: Int] {
        try database.run("DELETE FROM incremental_scope", [])
        step.pass = 0
        defer { step.pass = 0 }
        try seed(sinceRunID: sinceRunID, fxChangedFrom: fxChangedFrom)
        step.pass = 1
        try fanOut()
        try backToTransactions()
        try fanOut(addedSinceFirst: true)
        return try counts()
    }

    /// Adds `keys` (kind, key) for one rule (its time dependence).
    public func add(ruleID: String, keys: [(ScopeKind, String)]) throws {
        for (kind, key) in keys {
            try database.run(
                "INSERT INTO incremental_scope (rule_id, kind, scope_key) VALUES (?, ?, ?) ON CONFLICT (rule_id, kind, scope_key) DO NOTHING",
                [.text(ruleID), .text(kind.rawValue), .text(RuleScope.normalized(key, kind))])
        }
    }

    /// Keys in the shared scope, by kind.
    public func counts() throws -> [ScopeKind: Int] {
        var out: [ScopeKind: Int] = [:]
        for row in try database.query(
            "SELECT kind, COUNT(*) FROM incremental_scope WHERE rule_id = '' GROUP BY kind", [])
        {
            if let kind = row[0].textValue.flatMap(ScopeKind.init(rawValue:)) {
                out[kind] = Int(row[1].integerValue ?? 0)
            }
        }
        return out
    }

    // MARK: Steps

    /// Inserts `SELECT expression FROM body` as keys of `kind` (NULLs skipped, duplicates ignored).
    ///
    /// The NULL filter is written `COALESCE(k, NULL) IS NOT NULL` on purpose: SQLite pushes a plain
    /// `k IS NOT NULL` into `body` as the range `k > NULL` over an index on the key column and prefers that
    /// range — a read of the whole index — to the lookup `body` asks for (`LOWER(token) IN (scope)`).
    func insert(_ kind: ScopeKind, _ expression: String, _ body: String, _ parameters: [SQLValue] = []) throws {
        try database.run(
            """
            INSERT INTO incremental_scope (rule_id, kind, scope_key, pass)
            SELECT DISTINCT '', '\(kind.rawValue)', k, \(step.pass) FROM (SELECT \(expression) AS k FROM \(body)) seeds
            WHERE COALESCE(k, NULL) IS NOT NULL
            ON CONFLICT (rule_id, kind, scope_key) DO NOTHING
            """, parameters)
    }

    /// Inserts `SELECT expression FROM table WHERE keyExpression IN (…)` as keys of `kind` for every key of
    /// `keyKind` already in the scope, the keys bound as parameters in chunks. For key expressions with an
    /// expression index (`LOWER(app_account_token)`): SQLite uses such an index for `IN (?, ?, …)`, but not
    /// for `IN (SELECT scope_key …)` or a join on `scope_key`, whose `TEXT` affinity the index (no affinity)
    /// cannot serve, so it reads the whole table. (Rule macros select `scope_key || ''` instead; see
    /// ``RuleIncremental/scopedQuery(ruleID:)``.)
    func insert(
        _ kind: ScopeKind, _ expression: String, from table: String, where keyExpression: String,
        inKeysOf keyKind: ScopeKind
    ) throws {
        let keys = try database.query(
            "SELECT scope_key FROM incremental_scope WHERE rule_id = '' AND kind = ? ORDER BY scope_key",
            [.text(keyKind.rawValue)]
        ).compactMap { $0.first?.textValue }
        var start = 0
        while start < keys.count {
            let chunk = keys[start..<min(start + Self.keysPerStatement, keys.count)]
            let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            try insert(
                kind, expression, "\(table) WHERE \(keyExpression) IN (\(placeholders))", chunk.map { .text($0) })
            start += chunk.count
        }
    }

    /// Bound keys per statement (well under SQLite's and PostgreSQL's parameter limits).
    static let keysPerStatement = 500

    /// `expression IN (keys of kind)`; `addedSinceFirst`: only the keys the closure added.
    func inScope(_ kind: ScopeKind, _ expression: String, addedSinceFirst: Bool = false) -> String {
        "\(expression) IN (SELECT scope_key FROM incremental_scope WHERE rule_id = '' AND kind = '\(kind.rawValue)'"
            + (addedSinceFirst ? " AND pass >= 1)" : ")")
    }

    func seed(sinceRunID: Int64, fxChangedFrom: Int64?) throws {
        let run: [SQLValue] = [.integer(sinceRunID)]
        let transactions = "apple_transaction WHERE last_run_id > ?"
        try insert(.transactionID, "transaction_id", transactions, run)
        try insert(.originalTransactionID, "original_transaction_id", transactions, run)
        try insert(.appAccountToken, "LOWER(app_account_token)", transactions, run)
        try insert(.appTransactionID, "app_transaction_id", transactions, run)
        let sightings = "apple_sighting WHERE first_run_id > ?"
        try insert(.transactionID, "transaction_id", sightings, run)
        try insert(.originalTransactionID, "original_transaction_id", sightings, run)
        try insert(.appAccountToken, "LOWER(app_account_token)", sightings, run)
        try insert(.receiptKey, "receipt_key", sightings, run)
        try insert(.userID, "submitted_by_user_id", sightings, run)
        try insert(.orderID, "submitted_order_id", sightings, run)
        let orders = "backend_order WHERE last_run_id > ?"
        try insert(.orderID, "order_id", orders, run)
        try insert(.userID, "user_id", orders, run)
        try insert(.transactionID, "transaction_id", orders, run)
        try insert(.appAccountToken, "LOWER(app_account_token)", orders, run)
        try insert(.applicationUsername, "application_username", orders, run)
        let credits = "credit WHERE last_run_id > ?"
        try insert(.creditID, "credit_id", credits, run)
        try insert(.transactionID, "transaction_id", credits, run)
        try insert(.orderID, "order_id", credits, run)
        try insert(.userID, "user_id", credits, run)
        let notifications = "notification WHERE first_run_id > ?"
        try insert(.transactionID, "transaction_id", notifications, run)
        try insert(.originalTransactionID, "original_transaction_id", notifications, run)
        // A changed account decides its own home country and the owner of its token and username: its
        // purchases and every purchase carrying the token or username follow in step 2.
        let accounts = "user_account WHERE last_run_id > ?"
        try insert(.userID, "user_id", accounts, run)
        try insert(.appAccountToken, "LOWER(app_account_token)", accounts, run)
        try insert(.applicationUsername, "application_username", accounts, run)
        // What a changed row related to before the change (an order moved to another user, …).
        let fields: [(entity: String, field: String, kind: ScopeKind, lower: Bool)] = [
            ("transaction", "original_transaction_id", .originalTransactionID, false),
            ("transaction", "app_account_token", .appAccountToken, true),
            ("transaction", "app_transaction_id", .appTransactionID, false),
            ("order", "user_id", .userID, false), ("order", "transaction_id", .transactionID, false),
            ("order", "app_account_token", .appAccountToken, true),
            ("order", "application_username", .applicationUsername, false),
            ("credit", "transaction_id", .transactionID, false), ("credit", "order_id", .orderID, false),
            ("credit", "user_id", .userID, false),
            ("user", "app_account_token", .appAccountToken, true),
            ("user", "application_username", .applicationUsername, false),
        ]
        for entry in fields {
            try insert(
                entry.kind, entry.lower ? "LOWER(old_value)" : "old_value",
                "change_log WHERE run_id > ? AND entity = ? AND field = ?",
                run + [.text(entry.entity), .text(entry.field)])
        }
        if let from = fxChangedFrom {
            try insert(.transactionID, "transaction_id", "apple_transaction WHERE purchase_date >= ?", [.integer(from)])
            try insert(.creditID, "credit_id", "credit WHERE credited_at >= ?", [.integer(from)])
            try insert(.transactionID, "transaction_id", "credit WHERE credited_at >= ?", [.integer(from)])
        }
    }

    /// `table WHERE condition` for each condition: one statement each, so each can use its own index (an `OR`
    /// of `IN` lookups on different columns would scan the table).
    func each(_ table: String, _ conditions: [String]) -> [String] {
        conditions.map { "\(table) WHERE \($0)" }
    }

    /// Step 1 (and 3, with `addedSinceFirst`: from the keys added since step 1 started).
    func fanOut(addedSinceFirst: Bool = false) throws {
        func inScope(_ kind: ScopeKind, _ expression: String) -> String {
            self.inScope(kind, expression, addedSinceFirst: addedSinceFirst)
        }
        let transactions = "apple_transaction WHERE " + inScope(.transactionID, "transaction_id")
        try insert(.originalTransactionID, "original_transaction_id", transactions)
        try insert(.appAccountToken, "LOWER(app_account_token)", transactions)
        try insert(.appTransactionID, "app_transaction_id", transactions)
        let sightings = "apple_sighting WHERE " + inScope(.transactionID, "transaction_id")
        try insert(.originalTransactionID, "original_transaction_id", sightings)
        try insert(.appAccountToken, "LOWER(app_account_token)", sightings)
        try insert(.receiptKey, "receipt_key", sightings)
        try insert(.userID, "submitted_by_user_id", sightings)
        try insert(.orderID, "submitted_order_id", sightings)
        for orders in each(
            "backend_order", [inScope(.transactionID, "transaction_id"), inScope(.orderID, "order_id")])
        {
            try insert(.orderID, "order_id", orders)
            try insert(.userID, "user_id", orders)
            try insert(.appAccountToken, "LOWER(app_account_token)", orders)
            try insert(.applicationUsername, "application_username", orders)
        }
        for credits in each(
            "credit",
            [
                inScope(.transactionID, "transaction_id"), inScope(.orderID, "order_id"),
                inScope(.creditID, "credit_id"),
            ])
        {
            try insert(.creditID, "credit_id", credits)
            try insert(.userID, "user_id", credits)
            try insert(.orderID, "order_id", credits)
        }
    }

    func backToTransactions() throws {
        for table in ["backend_order", "apple_transaction"] {
            try insert(
                .transactionID, "transaction_id", from: table, where: "LOWER(app_account_token)",
                inKeysOf: .appAccountToken)
        }
        let sources =
            each(
                "backend_order",
                [
                    inScope(.orderID, "order_id"), inScope(.userID, "user_id"),
                    inScope(.applicationUsername, "application_username"),
                ])
            + each(
                "credit",
                [inScope(.creditID, "credit_id"), inScope(.orderID, "order_id"), inScope(.userID, "user_id")])
            + each(
                "apple_transaction",
                [
                    inScope(.originalTransactionID, "original_transaction_id"),
                    inScope(.appTransactionID, "app_transaction_id"),
                ])
            + each(
                "apple_sighting",
                [
                    inScope(.receiptKey, "receipt_key"), inScope(.userID, "submitted_by_user_id"),
                    inScope(.originalTransactionID, "original_transaction_id"),
                ])
        for source in sources { try insert(.transactionID, "transaction_id", source) }
    }
}
