import Foundation

/// Computes the shared dirty scope of an incremental rule stage into `incremental_scope` (rule_id `''`), on
/// any SQL-backed store (plain SQL; no temporary tables or engine-only functions). Every statement is an
/// index lookup (`ScopePlanTests`); lookups by `LOWER(app_account_token)` bind the scoped tokens as a
/// parameter list, the one form SQLite uses that expression index for.
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
/// 2. back to transactions: those of scoped orders, credits, original ids and receipts;
/// 3. fan out again as in 1, from the keys added since step 1 started: every lookup is one key at a time,
///    so what the keys step 1 started with lead to is in the scope already.
///
/// The closure is computed in memory (``ScopeClosure``) and the table written once, in key order.
///
/// So a new refund for transaction T scopes T, its original id, the users credited for it and the owners
/// of its orders (step 1), the other purchases of its original id (step 2) and their orders and credits
/// (step 3).
///
/// Step 2 does not go back from the keys many purchases share (``ScopeKind/sharedKinds``: a user, a token,
/// a username, an Apple Account): from a user's one new purchase that would bring in the user's whole
/// history, and a day's purchases touch a seventh of the users. A rule whose result for one purchase can
/// change with another purchase sharing such a key declares the kinds (`incremental.shared_keys`);
/// ``widen(ruleID:kinds:limit:)`` then adds, under the rule's own id, the purchases carrying the scope's keys
/// of those kinds and fans out from them, in SQL (`INSERT … SELECT`).
public struct ScopeBuilder {
    public let database: any SQLExecutor
    /// The rule id a widening writes its keys under.
    private let step = Step()

    private final class Step {
        var target = ""
    }

    public init(database: any SQLExecutor) {
        self.database = database
    }

    /// Replaces the shared scope with the rows changed after `sinceRunID`, closed (see the type). Returns
    /// the number of keys by kind.
    @discardableResult
    public func build(sinceRunID: Int64, fxChangedFrom: Int64?) throws -> [ScopeKind: Int] {
        try buildShared(sinceRunID: sinceRunID, fxChangedFrom: fxChangedFrom).mapValues(\.count)
    }

    /// ``build(sinceRunID:fxChangedFrom:)``, returning the keys written, by kind (what
    /// ``RuleScope/loadShared(from:)`` would read back).
    public func buildShared(sinceRunID: Int64, fxChangedFrom: Int64?) throws -> [ScopeKind: Set<String>] {
        try database.run("DELETE FROM incremental_scope", [])
        var closure = ScopeClosure(database: database)
        try closure.build(sinceRunID: sinceRunID, fxChangedFrom: fxChangedFrom)
        try write(closure.keys)
        return closure.sets
    }

    /// Inserts the shared scope's keys in key order, many rows per statement.
    private func write(_ keys: [ScopeKind: [String: Int]]) throws {
        var rows: [(kind: String, key: String, pass: Int)] = []
        rows.reserveCapacity(keys.values.reduce(0) { $0 + $1.count })
        for kind in keys.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
            guard let passes = keys[kind] else { continue }
            for key in passes.keys.sorted() { rows.append((kind.rawValue, key, passes[key] ?? 0)) }
        }
        var start = 0
        while start < rows.count {
            let end = min(start + Self.keysPerStatement, rows.count)
            var parameters: [SQLValue] = []
            parameters.reserveCapacity(3 * (end - start))
            for row in rows[start..<end] {
                parameters.append(.text(row.kind))
                parameters.append(.text(row.key))
                parameters.append(.integer(Int64(row.pass)))
            }
            let values = Array(repeating: "('', ?, ?, ?)", count: end - start).joined(separator: ", ")
            try database.run(
                "INSERT INTO incremental_scope (rule_id, kind, scope_key, pass) VALUES \(values)", parameters)
            start = end
        }
    }

    /// Adds to rule `ruleID`'s own scope the purchases carrying the shared scope's keys of `kinds` (a
    /// user's other purchases, those carrying a token, a username, an Apple Account), then fans out from them
    /// as step 3 does; keys already in the shared scope are not repeated. Returns false, adding nothing,
    /// when at least `limit` rows carry those keys: evaluating the rule fully is then cheaper.
    public func widen(ruleID: String, kinds: Set<ScopeKind>, limit: Int) throws -> Bool {
        try widen(ruleID: ruleID, kinds: kinds, heldSince: nil, limit: limit)
    }

    /// ``widen(ruleID:kinds:limit:)``; with `heldSince`, only by the markers (tokens, usernames) whose
    /// holders may have changed after that run (``changedHolderKeys(_:since:)``), for a rule that reads
    /// other purchases only through who holds its marker (`shared_by: holders`).
    public func widen(ruleID: String, kinds: Set<ScopeKind>, heldSince: Int64?, limit: Int) throws -> Bool {
        let bodies = try backStepBodies(kinds, heldSince: heldSince)
        var rows = 0
        for body in bodies {
            let counted = try database.query(
                "SELECT COUNT(*) FROM (SELECT 1 FROM \(body.sql) LIMIT ?) probe",
                body.parameters + [.integer(Int64(limit - rows))])
            rows += Int(counted.first?.first?.integerValue ?? 0)
            if rows >= limit { return false }
        }
        step.target = ruleID
        defer { step.target = "" }
        for body in bodies { try insert(.transactionID, "transaction_id", body.sql, body.parameters) }
        try fanOutFromAdded()
        return true
    }

    /// Copies the keys ``widen(ruleID:kinds:limit:)`` added for `from` to rule `to` (another rule widened by
    /// the same kinds).
    public func copyWidened(from: String, to: String) throws {
        try database.run(
            """
            INSERT INTO incremental_scope (rule_id, kind, scope_key, pass)
            SELECT ?, kind, scope_key, pass FROM incremental_scope WHERE rule_id = ? AND pass >= 1
            ON CONFLICT (rule_id, kind, scope_key) DO NOTHING
            """, [.text(to), .text(from)])
    }

    /// Adds `keys` (kind, key) for one rule (its time dependence).
    public func add(ruleID: String, keys: [(ScopeKind, String)]) throws {
        for (kind, key) in keys {
            try database.run(
                "INSERT INTO incremental_scope (rule_id, kind, scope_key) VALUES (?, ?, ?) ON CONFLICT (rule_id, kind, scope_key) DO NOTHING",
                [.text(ruleID), .text(kind.rawValue), .text(RuleScope.normalized(key, kind))])
        }
    }

    // MARK: Steps

    /// Inserts `SELECT expression FROM body` as keys of `kind` under the rule being widened, with pass 1 (NULLs
    /// skipped, duplicates ignored).
    func insert(_ kind: ScopeKind, _ expression: String, _ body: String, _ parameters: [SQLValue] = []) throws {
        try insert([(kind, expression)], from: body, parameters)
    }

    /// Inserts, for each output, `SELECT expression FROM body` as keys of its kind under the rule being widened,
    /// with pass 1 (NULLs skipped, duplicates ignored), reading `body`'s rows once: a day's scope looks up tens of thousands of keys per body, and
    /// one statement per output looked each up again. The same as one statement per output in turn, since no
    /// output adds keys of the kind `body` selects by (an output of that kind is the key itself).
    ///
    /// The NULL filter is written `COALESCE(k, NULL) IS NOT NULL` on purpose: SQLite pushes a plain
    /// `k IS NOT NULL` into `body` as the range `k > NULL` over an index on the key column and prefers that
    /// range — a read of the whole index — to the lookup `body` asks for (`LOWER(token) IN (scope)`).
    func insert(_ outputs: [(kind: ScopeKind, expression: String)], from body: String, _ parameters: [SQLValue] = [])
        throws
    {
        // While widening, a key the shared scope holds is not repeated under the rule.
        let target = step.target
        let notShared =
            target.isEmpty
            ? ""
            : """

            AND NOT EXISTS (SELECT 1 FROM incremental_scope x WHERE x.rule_id = '' AND x.kind = seeds.kind
                            AND x.scope_key = seeds.k)
            """
        let columns = outputs.enumerated().map { "\($1.expression) AS k\($0)" }.joined(separator: ", ")
        let arms = outputs.enumerated().map { "SELECT '\($1.kind.rawValue)' AS kind, k\($0) AS k FROM found" }
            .joined(separator: " UNION ALL ")
        try database.run(
            """
            WITH found AS MATERIALIZED (SELECT \(columns) FROM \(body))
            INSERT INTO incremental_scope (rule_id, kind, scope_key, pass)
            SELECT DISTINCT ?, kind, k, 1 FROM (\(arms)) seeds
            WHERE COALESCE(k, NULL) IS NOT NULL\(notShared)
            ON CONFLICT (rule_id, kind, scope_key) DO NOTHING
            """, parameters + [.text(target)])
    }

    /// The shared scope's keys of `kind`, to be bound (``boundBodies(table:where:keys:)``).
    func sharedKeys(of kind: ScopeKind) throws -> [String] {
        try database.query(
            "SELECT scope_key FROM incremental_scope WHERE rule_id = '' AND kind = ? ORDER BY scope_key",
            [.text(kind.rawValue)]
        ).compactMap { $0.first?.textValue }
    }

    /// `table WHERE keyExpression IN (…)` for `keys`, bound as parameters in chunks. For key expressions with
    /// an expression index (`LOWER(app_account_token)`): SQLite uses such an index for `IN (?, ?, …)`, but not
    /// for `IN (SELECT scope_key …)` or a join on `scope_key`, whose `TEXT` affinity the index (no affinity)
    /// cannot serve, so it reads the whole table. (Rule macros select `scope_key || ''` instead; see
    /// ``RuleIncremental/scopedQuery(ruleID:)``.)
    static func boundBodies(table: String, where keyExpression: String, keys: [String]) -> [Body] {
        var bodies: [Body] = []
        var start = 0
        while start < keys.count {
            let chunk = keys[start..<min(start + Self.keysPerStatement, keys.count)]
            let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            bodies.append(
                Body(sql: "\(table) WHERE \(keyExpression) IN (\(placeholders))", parameters: chunk.map { .text($0) }))
            start += chunk.count
        }
        return bodies
    }

    /// A `FROM` clause with its bound parameters.
    struct Body {
        var sql: String
        var parameters: [SQLValue] = []
    }

    /// Bound keys per statement (well under SQLite's and PostgreSQL's parameter limits).
    static let keysPerStatement = 500

    /// `expression IN (keys of kind)`; `addedSinceFirst`: only the keys the closure added (while widening:
    /// the keys added for the rule).
    func inScope(_ kind: ScopeKind, _ expression: String, addedSinceFirst: Bool = false) -> String {
        let rule =
            step.target.isEmpty
            ? "rule_id = ''" : "rule_id = '\(step.target.replacingOccurrences(of: "'", with: "''"))'"
        return "\(expression) IN (SELECT scope_key FROM incremental_scope WHERE \(rule) AND kind = '\(kind.rawValue)'"
            + (addedSinceFirst ? " AND pass >= 1)" : ")")
    }

    /// Step 3 while widening (``ScopeClosure/fanOut``): from the keys added for the rule.
    func fanOutFromAdded() throws {
        for lookup in ScopeClosure.fanOut {
            try insert(
                lookup.outputColumns,
                from: "\(lookup.table) WHERE " + inScope(lookup.by, lookup.column, addedSinceFirst: true))
        }
    }

    /// The markers of `kind` (a token, lower-cased, or a username) whose holders — the user ids of the
    /// accounts and orders carrying it — may differ from what they were after run `since`: carried by an
    /// order changed since, unless an unchanged order carries it for the same user; by an account changed
    /// since; taken off an order or account since (`change_log`); or carried by an order whose user changed.
    func changedHolderKeys(_ kind: ScopeKind, since: Int64) throws -> [String] {
        let (column, key): (String, String) =
            kind == .appAccountToken
            ? ("app_account_token", "LOWER(app_account_token)") : ("application_username", "application_username")
        func on(_ alias: String) -> String { key.replacingOccurrences(of: column, with: "\(alias).\(column)") }
        let sql = """
            SELECT \(on("o")) FROM backend_order o
            WHERE o.last_run_id > ? AND o.\(column) IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM backend_order p
                              WHERE \(on("p")) = \(on("o")) AND p.last_run_id <= ?
                                AND (p.user_id = o.user_id OR (p.user_id IS NULL AND o.user_id IS NULL)))
            UNION
            SELECT \(key) FROM user_account WHERE last_run_id > ? AND \(column) IS NOT NULL
            UNION
            SELECT \(kind == .appAccountToken ? "LOWER(old_value)" : "old_value") FROM change_log
            WHERE run_id > ? AND entity IN ('order', 'user') AND field = '\(column)' AND old_value IS NOT NULL
            UNION
            SELECT \(on("o")) FROM change_log l JOIN backend_order o ON o.order_id = l.entity_key
            WHERE l.run_id > ? AND l.entity = 'order' AND l.field = 'user_id' AND o.\(column) IS NOT NULL
            """
        return try database.query(sql, Array(repeating: .integer(since), count: 5)).compactMap { $0.first?.textValue }
            .sorted()
    }

    /// Where the purchases carrying a key of each shared kind are found: table and key expression. The
    /// widening looks its keys up there; the planner's early estimate too
    /// (``IncrementalPlanner/fullBeforeScope(rules:now:forceFull:)``).
    static let sharedBackSteps: [ScopeKind: [(table: String, key: String)]] = [
        .userID: [("backend_order", "user_id"), ("credit", "user_id"), ("apple_sighting", "submitted_by_user_id")],
        .appAccountToken: [
            ("backend_order", "LOWER(app_account_token)"), ("apple_transaction", "LOWER(app_account_token)"),
        ],
        .applicationUsername: [("backend_order", "application_username")],
        .appTransactionID: [("apple_transaction", "app_transaction_id")],
    ]

    /// The rows whose transactions ``widen(ruleID:kinds:heldSince:limit:)`` adds: those carrying the shared
    /// scope's keys of `kinds` (read before the rule's own keys exist, so from the shared scope alone), or with
    /// `heldSince` the markers whose holders may have changed after that run (``changedHolderKeys(_:since:)``).
    func backStepBodies(_ kinds: Set<ScopeKind>, heldSince: Int64?) throws -> [Body] {
        var bodies: [Body] = []
        for kind in ScopeKind.sharedKinds where kinds.contains(kind) {
            let lookups = Self.sharedBackSteps[kind] ?? []
            if let heldSince, ScopeKind.heldKinds.contains(kind) {
                let keys = try changedHolderKeys(kind, since: heldSince)
                for (table, key) in lookups { bodies += Self.boundBodies(table: table, where: key, keys: keys) }
            } else if kind == .appAccountToken {
                // The expression index on LOWER(app_account_token) serves bound keys only (``boundBodies``).
                let keys = try sharedKeys(of: kind)
                for (table, key) in lookups { bodies += Self.boundBodies(table: table, where: key, keys: keys) }
            } else {
                for (table, key) in lookups { bodies.append(Body(sql: "\(table) WHERE " + inScope(kind, key))) }
            }
        }
        return bodies
    }
}
