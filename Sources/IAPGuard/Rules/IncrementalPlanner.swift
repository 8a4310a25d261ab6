import Foundation

/// Decides, per rule, whether a rule stage evaluates it fully or incrementally, builds the dirty scope, and
/// records each rule's evaluation afterwards (table `rule_state`). See `docs/rules.md`, *Incremental
/// evaluation*.
///
/// A rule is evaluated incrementally when it has an `incremental:` block, the store holds its previous
/// evaluation with the same fingerprint (rule definition, bound parameters, reference currency, configured
/// apps, catalog and testers), that evaluation priced no finding at its `:now`, `:now` did not move
/// backwards, no exception of the rule expires between the two nows, and its time queries ran. Everything
/// else is evaluated fully — always correct.
public struct IncrementalPlanner {
    /// How one rule is evaluated in this stage.
    public enum Mode: Sendable, Hashable, CustomStringConvertible {
        case full(reason: String)
        case incremental(scopeKeys: Int)

        public var description: String {
            switch self {
            case .full(let reason): "full (\(reason))"
            case .incremental(let keys): "incremental (\(keys) keys in scope)"
            }
        }

        public var isIncremental: Bool {
            if case .incremental = self { return true }
            return false
        }
    }

    /// The plan of one rule stage.
    public struct Plan: Sendable {
        public var modes: [String: Mode] = [:]
        /// The scopes of the rules evaluated incrementally, by rule id.
        public var scopes: [String: RuleScope] = [:]
        /// Keys in the shared scope, by kind (empty when no rule is incremental).
        public var sharedScope: [ScopeKind: Int] = [:]
        /// The run after which the shared scope's changes are counted; nil when there is no shared scope.
        public var sharedScopeSince: Int64?
        /// Seconds spent computing the scope.
        public var seconds: Double = 0
        /// Of ``seconds``: the shared scope, the rules' time queries, loading the rules' scopes.
        public var sharedScopeSeconds: Double = 0
        public var timeQuerySeconds: Double = 0
        public var scopeLoadSeconds: Double = 0
        /// Time queries run, and answered from the cache (same query text and bound parameters).
        public var timeQueriesRun = 0
        public var timeQueriesCached = 0
        /// Scopes widened by shared kinds (comma-joined): the id whose keys hold the widening, or nil when
        /// too many purchases shared them (``IncrementalPlanner/widen(_:id:kinds:holders:)``).
        var widened: [String: String?] = [:]
        /// The row limit of this plan's widenings, once computed.
        public var widenLimit: Int?
    }

    /// A rule's stored previous evaluation.
    struct State {
        var fingerprint: String
        var runID: Int64
        var now: Int64
        var pricedAtNow: Bool
    }

    public let store: any SQLBackedStore
    public let referenceCurrency: String
    public let paramOverrides: [String: [String: SQLValue]]
    /// The least row limit of a widening (``widenLimit()``).
    var minimumWidenLimit = 1_000

    public init(store: any SQLBackedStore, referenceCurrency: String, paramOverrides: [String: [String: SQLValue]]) {
        self.store = store
        self.referenceCurrency = referenceCurrency
        self.paramOverrides = paramOverrides
    }

    var database: any SQLExecutor { store.connection }

    /// Plans the stage of run `runID` at `now`; `forceFull` (a full rebuild, a rewound window) evaluates
    /// every rule fully, and so are the rules of `decided` (``fullBeforeScope(rules:now:forceFull:)``), with
    /// their reasons. Runs inside the rule stage's transaction, or in one of its own before it: then
    /// `remembersFX` is false and the stage's transaction calls ``rememberFXRates()``, so that the rates count
    /// as evaluated only once the findings made with them are committed.
    public func plan(
        rules: [Rule], runID: Int64, now: Int64, forceFull: String?, decided: [String: String] = [:],
        remembersFX: Bool = true
    ) throws -> Plan {
        let start = Date()
        var plan = Plan()
        let reference = try referenceFingerprint()
        let fxFrom = try fxChangedFrom()
        let states = try loadStates()
        var candidates: [(Rule, State)] = []
        for rule in rules {
            let state = states[rule.id]
            let reason =
                decided[rule.id] ?? fullReason(rule, state: state, now: now, forceFull: forceFull, reference: reference)
            if let reason {
                plan.modes[rule.id] = .full(reason: reason)
            } else if let state {
                candidates.append((rule, state))
            }
        }
        try database.run("DELETE FROM incremental_scope", [])
        if let since = candidates.map(\.1.runID).min() {
            let builder = ScopeBuilder(database: database)
            var mark = Date()
            // The keys as written: the same as ``RuleScope/loadShared(from:)`` would read back.
            let shared = try builder.buildShared(sinceRunID: since, fxChangedFrom: fxFrom)
            plan.sharedScope = shared.mapValues(\.count)
            plan.sharedScopeSince = since
            plan.sharedScopeSeconds = Date().timeIntervalSince(mark)
            var cache = TimeQueryCache()
            for (rule, state) in candidates {
                do {
                    mark = Date()
                    let widened = try widen(
                        &plan, id: rule.id, kinds: rule.incremental?.sharedKeys ?? [],
                        holders: rule.incremental?.sharedByHolders ?? false, builder: builder)
                    plan.sharedScopeSeconds += Date().timeIntervalSince(mark)
                    guard widened else {
                        plan.modes[rule.id] = .full(
                            reason: Self.tooWideReason(
                                limit: plan.widenLimit ?? 0, kinds: rule.incremental?.sharedKeys ?? []))
                        continue
                    }
                    mark = Date()
                    var keys = try timeKeys(rule, previousNow: state.now, now: now, cache: &cache)
                    if rule.incremental?.reevaluatesOpenFindings == true {
                        guard let open = try openFindingKeys(rule) else {
                            plan.modes[rule.id] = .full(reason: "a standing finding's key cannot be told")
                            continue
                        }
                        keys += open
                    }
                    try builder.add(ruleID: rule.id, keys: keys)
                    plan.timeQuerySeconds += Date().timeIntervalSince(mark)
                    mark = Date()
                    defer { plan.scopeLoadSeconds += Date().timeIntervalSince(mark) }
                    guard let scope = try RuleScope.load(rule: rule, shared: shared, from: database) else { continue }
                    plan.scopes[rule.id] = scope
                    plan.modes[rule.id] = .incremental(scopeKeys: scope.count)
                } catch {
                    plan.modes[rule.id] = .full(reason: "time query failed: \(error)")
                }
            }
            plan.timeQueriesRun = cache.rows.count
            plan.timeQueriesCached = cache.hits
        }
        if remembersFX { try rememberFXRates() }
        plan.seconds = Date().timeIntervalSince(start)
        return plan
    }

    /// The rules this stage will evaluate fully because too many purchases share the keys their
    /// `shared_keys` follow, told before the scope is built, so that their full queries can start while it
    /// is: the purchases carrying the keys of the rows changed since the rule's last evaluation are a part of
    /// what ``widen(_:id:kinds:holders:)`` would count, and when they alone reach the limit, so would the
    /// widening. Rule id → reason. Rules that run fully for another reason, and rules widened by holders, are
    /// not listed (``plan(rules:runID:now:forceFull:decided:)`` tells them).
    public func fullBeforeScope(rules: [Rule], now: Int64, forceFull: String?) throws -> [String: String] {
        guard forceFull == nil else { return [:] }
        // Widening by holders reads only the markers whose holders changed: the changed rows' keys are no
        // lower bound of that.
        let wide = rules.filter { $0.incremental.map { !$0.sharedKeys.isEmpty && !$0.sharedByHolders } ?? false }
        guard !wide.isEmpty else { return [:] }
        let states = try loadStates()
        let reference = try referenceFingerprint()
        var limit: Int?
        var decided: [String: String] = [:]
        for rule in wide {
            guard let state = states[rule.id], let kinds = rule.incremental?.sharedKeys,
                fullReason(rule, state: state, now: now, forceFull: nil, reference: reference) == nil
            else { continue }
            let cap = try limit ?? widenLimit()
            limit = cap
            if try changedRowsShare(kinds, since: state.runID, limit: cap) {
                decided[rule.id] = Self.tooWideReason(limit: cap, kinds: kinds)
            }
        }
        return decided
    }

    static func tooWideReason(limit: Int, kinds: Set<ScopeKind>) -> String {
        "\(limit)+ purchases share the scope's "
            + ScopeKind.sharedKinds.filter(kinds.contains).map(\.rawValue).joined(separator: ", ") + ": cheaper in full"
    }

    /// Whether at least `limit` rows carry the keys of `kinds` that rows changed after run `since` carry: the
    /// widening's own lookups (``ScopeBuilder/sharedBackSteps``), from the keys of the changed orders, credits
    /// and transactions (a part of the shared scope's seeds: the tables that record `last_run_id`).
    func changedRowsShare(_ kinds: Set<ScopeKind>, since: Int64, limit: Int) throws -> Bool {
        var rows = 0
        for kind in ScopeKind.sharedKinds where kinds.contains(kind) {
            let lookups = ScopeBuilder.sharedBackSteps[kind] ?? []
            let seeds = lookups.filter { $0.table != "apple_sighting" }
            guard !seeds.isEmpty else { continue }
            // `|| ''` leaves the seeds without affinity, so SQLite can look them up in the expression index on
            // LOWER(app_account_token).
            let seedSQL = seeds.map { table, key in
                "SELECT \(key) || '' FROM \(table) WHERE last_run_id > ? AND \(key) IS NOT NULL"
            }.joined(separator: " UNION ")
            for (table, key) in lookups {
                let counted = try database.query(
                    "SELECT COUNT(*) FROM (SELECT 1 FROM \(table) WHERE \(key) IN (\(seedSQL)) LIMIT ?) probe",
                    Array(repeating: SQLValue.integer(since), count: seeds.count) + [.integer(Int64(limit - rows))])
                rows += Int(counted.first?.first?.integerValue ?? 0)
                if rows >= limit { return true }
            }
        }
        return false
    }

    /// Why `rule` runs fully whatever the scope holds (nil: it can run incrementally).
    func fullReason(_ rule: Rule, state: State?, now: Int64, forceFull: String?, reference: String) -> String? {
        if let forceFull { return forceFull }
        guard rule.incremental != nil else { return "no incremental: block" }
        guard let state else { return "no earlier evaluation" }
        if state.fingerprint != fingerprint(rule, reference: reference) {
            return "rule, parameters or configuration changed"
        } else if state.pricedAtNow {
            return "the last evaluation priced findings at its :now"
        } else if state.now > now {
            return ":now is before the last evaluation's"
        } else if rule.exceptions.contains(where: { exception in
            guard let end = exception.expiresAfterMillis else { return false }
            return end >= state.now && end <= now
        }) {
            return "an exception expires since the last evaluation"
        }
        return nil
    }

    /// Each rule's stored previous evaluation.
    func loadStates() throws -> [String: State] {
        var states: [String: State] = [:]
        for row in try database.query(
            "SELECT rule_id, fingerprint, run_id, evaluated_now, priced_at_now FROM rule_state", [])
        {
            guard let id = row[0].textValue, let fingerprint = row[1].textValue, let run = row[2].integerValue,
                let evaluatedNow = row[3].integerValue
            else { continue }
            states[id] = State(
                fingerprint: fingerprint, runID: run, now: evaluatedNow, pricedAtNow: (row[4].integerValue ?? 0) != 0)
        }
        return states
    }

    /// Widens the scope of `id` (a rule, or another reader of the scope such as the report's coverage line)
    /// by the purchases sharing the shared scope's keys of `kinds`, or with `holders` only the markers whose
    /// holders changed since the shared scope's run (``ScopeBuilder/widen(ruleID:kinds:heldSince:limit:)``);
    /// a second reader with the same kinds and mode gets a copy. Returns false when too many purchases share
    /// them (the reader then reads everything), true when widened or `kinds` is empty. Call after
    /// ``plan(rules:runID:now:forceFull:decided:)`` built a shared scope.
    public func widen(_ plan: inout Plan, id: String, kinds: Set<ScopeKind>, holders: Bool = false) throws -> Bool {
        try widen(&plan, id: id, kinds: kinds, holders: holders, builder: ScopeBuilder(database: database))
    }

    private func widen(
        _ plan: inout Plan, id: String, kinds: Set<ScopeKind>, holders: Bool, builder: ScopeBuilder
    ) throws -> Bool {
        guard !kinds.isEmpty else { return true }
        // Widening by holders reads the changes after the shared scope's run.
        if holders, plan.sharedScopeSince == nil { return false }
        let name =
            ScopeKind.sharedKinds.filter(kinds.contains).map(\.rawValue).joined(separator: ",")
            + (holders ? " by holders" : "")
        if let outcome = plan.widened[name] {
            guard let holder = outcome else { return false }
            try builder.copyWidened(from: holder, to: id)
            return true
        }
        let limit = try plan.widenLimit ?? widenLimit()
        plan.widenLimit = limit
        let widened = try builder.widen(
            ruleID: id, kinds: kinds, heldSince: holders ? plan.sharedScopeSince : nil, limit: limit)
        plan.widened[name] = .some(widened ? id : nil)
        return widened
    }

    /// Rows carrying shared keys above which a rule is evaluated fully rather than widened: 1 in 50 of the
    /// store's purchases (at least 1,000). A scoped query reads its keys through indexes, one at a time; past
    /// a few percent of the store that costs more than the full query, which runs on a reader beside the
    /// scoped rules.
    func widenLimit() throws -> Int {
        let purchases = try database.query("SELECT COUNT(*) FROM apple_transaction", []).first?.first?.integerValue ?? 0
        return max(minimumWidenLimit, Int(purchases / 50))
    }

    /// Records the evaluation of each rule of `result` (a rule that failed loses its state: it is
    /// evaluated fully next time).
    public func record(_ result: RuleRunResult, rules: [Rule], runID: Int64, now: Int64) throws {
        let reference = try referenceFingerprint()
        let byID = Dictionary(rules.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for stats in result.stats {
            guard let rule = byID[stats.ruleID], stats.error == nil else {
                try database.run("DELETE FROM rule_state WHERE rule_id = ?", [.text(stats.ruleID)])
                continue
            }
            try database.run(
                """
                INSERT INTO rule_state (rule_id, fingerprint, run_id, evaluated_now, mode, priced_at_now)
                VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (rule_id) DO UPDATE SET fingerprint = excluded.fingerprint, run_id = excluded.run_id,
                    evaluated_now = excluded.evaluated_now, mode = excluded.mode,
                    priced_at_now = excluded.priced_at_now
                """,
                [
                    .text(rule.id), .text(fingerprint(rule, reference: reference)), .integer(runID), .integer(now),
                    .text(stats.mode ?? "full"), .integer(stats.pricedAtNow > 0 ? 1 : 0),
                ])
        }
    }

    // MARK: Pieces

    /// Rows of time queries already run in this plan, by query text and bound parameters (several rules
    /// share the same time query, e.g. the credits' `reversed_at`).
    struct TimeQueryCache {
        var rows: [String: [[String: SQLValue]]] = [:]
        var hits = 0
    }

    /// The keys `rule`'s time queries report for `at` in `[previousNow, now]`.
    func timeKeys(_ rule: Rule, previousNow: Int64, now: Int64) throws -> [(ScopeKind, String)] {
        var cache = TimeQueryCache()
        return try timeKeys(rule, previousNow: previousNow, now: now, cache: &cache)
    }

    /// ``timeKeys(_:previousNow:now:)``, answering a query run before with the same text and parameters
    /// from `cache`.
    func timeKeys(_ rule: Rule, previousNow: Int64, now: Int64, cache: inout TimeQueryCache) throws -> [(
        ScopeKind, String
    )] {
        guard let incremental = rule.incremental else { return [] }
        var parameters = rule.boundParameters(
            overrides: paramOverrides[rule.id] ?? [:], now: now, since: 0, referenceCurrency: referenceCurrency)
        parameters["previous_now"] = .integer(previousNow)
        var keys: [(ScopeKind, String)] = []
        for query in incremental.timeQueries {
            let sql = Self.timeQuerySQL(query)
            // Only the parameters the query names are bound: the cache key is the text and those values.
            let cacheKey =
                ([sql]
                + parameters.keys.sorted().filter { sql.contains(":\($0)") }.map { name in
                    "\(name)=\(parameters[name].map { "\($0)" } ?? "")"
                }).joined(separator: "\u{1F}")
            let rows: [[String: SQLValue]]
            if let cached = cache.rows[cacheKey] {
                rows = cached
                cache.hits += 1
            } else {
                var fresh: [[String: SQLValue]] = []
                try store.query(sql, parameters: parameters) { columns, values in
                    var row: [String: SQLValue] = [:]
                    for (column, value) in zip(columns, values) { row[column] = value }
                    fresh.append(row)
                }
                cache.rows[cacheKey] = fresh
                rows = fresh
            }
            for row in rows {
                guard let key = row["key"]?.textValue else { continue }
                let kind: ScopeKind
                if let text = row["kind"]?.textValue {
                    guard let named = ScopeKind(rawValue: text) else {
                        throw RuleEngineError(message: "time query returned kind '\(text)', not a scope kind")
                    }
                    kind = named
                } else if let fixed = incremental.kind {
                    kind = fixed
                } else {
                    throw RuleEngineError(
                        message: "time query has no kind column (the rule's kind comes from a column)")
                }
                keys.append((kind, key))
            }
        }
        return keys
    }

    /// The scope keys of `rule`'s standing findings (every status but `resolved`), for a rule that
    /// re-evaluates them on every run; nil when one of their keys cannot be told (the rule then runs fully).
    func openFindingKeys(_ rule: Rule) throws -> [(ScopeKind, String)]? {
        guard let incremental = rule.incremental else { return [] }
        let json = EvidenceJSON()
        var keys: [(ScopeKind, String)] = []
        for row in try database.query(
            "SELECT entity_key FROM finding WHERE rule_id = ? AND status <> 'resolved'", [.text(rule.id)])
        {
            guard let text = row[0].textValue, let fields = json.decodeFields(text),
                let key = incremental.scopeKey(of: fields)
            else { return nil }
            keys.append(key)
        }
        return keys
    }

    /// A rule's time query limited to the moments between the last evaluation's `:now` and this one's (the
    /// engines push the bounds into the query, so a plain column such as `reversed_at` is an index range).
    static func timeQuerySQL(_ query: String) -> String {
        "SELECT * FROM (\(query)) moments WHERE moments.at >= :previous_now AND moments.at <= :now"
    }

    /// A stable fingerprint of what a rule's findings are computed from.
    func fingerprint(_ rule: Rule, reference: String) -> String {
        var parts: [String] = [
            rule.id, rule.title, rule.version, rule.status.rawValue, rule.level.rawValue, rule.query,
            rule.entityKey.joined(separator: ","), rule.evidenceColumns.joined(separator: ","),
            rule.incremental.map {
                [
                    $0.template, $0.keyColumn, $0.kind?.rawValue ?? "", $0.kindColumn ?? "",
                    $0.reevaluatesOpenFindings ? "open" : "",
                    ScopeKind.sharedKinds.filter($0.sharedKeys.contains).map(\.rawValue).joined(separator: ","),
                    $0.sharedByHolders ? "holders" : "",
                ] + $0.timeQueries
            }?
            .joined(separator: "\u{1E}") ?? "",
            referenceCurrency, reference,
        ]
        parts += rule.evidenceQueries.map { "\($0.kind)\u{1F}\($0.limit)\u{1F}\($0.sql)" }
        parts += rule.exceptions.map { exception in
            exception.match.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
                + "\u{1F}\(exception.owner)\u{1F}\(exception.reason)\u{1F}\(exception.expires)"
        }
        let bound = rule.boundParameters(
            overrides: paramOverrides[rule.id] ?? [:], now: 0, since: 0, referenceCurrency: referenceCurrency)
        parts += bound.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return Hashing.sha256Hex(parts.joined(separator: "\u{1D}"))
    }

    /// A fingerprint of the configured apps, catalog and testers (FX rates are tracked by date instead).
    func referenceFingerprint() throws -> String {
        var text = ""
        for sql in [
            "SELECT bundle_id, app_apple_id, environments FROM ref_app ORDER BY bundle_id",
            "SELECT bundle_id, product_id, type, units, ref_price, ref_currency FROM ref_product ORDER BY bundle_id, product_id",
            "SELECT user_id, note FROM ref_tester ORDER BY user_id",
        ] {
            for row in try database.query(sql, []) {
                text += row.map { $0.textValue ?? "\u{0}" }.joined(separator: "\u{1F}") + "\n"
            }
            text += "\u{1D}"
        }
        return Hashing.sha256Hex(text)
    }

    /// The earliest date of an FX rate added, changed or removed since the last rule stage (nil: none).
    func fxChangedFrom() throws -> Int64? {
        let rows = try database.query(
            """
            SELECT MIN(rate_date) FROM (
                SELECT r.rate_date FROM ref_fx_rate r
                WHERE NOT EXISTS (SELECT 1 FROM fx_rate_seen s WHERE s.currency = r.currency
                                  AND s.rate_date = r.rate_date AND s.per_eur = r.per_eur)
                UNION ALL
                SELECT s.rate_date FROM fx_rate_seen s
                WHERE NOT EXISTS (SELECT 1 FROM ref_fx_rate r WHERE r.currency = s.currency
                                  AND r.rate_date = s.rate_date AND r.per_eur = s.per_eur)) changed
            """, [])
        return rows.first?.first?.integerValue
    }

    /// Records the FX rates this stage evaluates with, for the next stage's ``fxChangedFrom()``.
    func rememberFXRates() throws {
        try database.run("DELETE FROM fx_rate_seen", [])
        try database.run(
            "INSERT INTO fx_rate_seen (currency, rate_date, per_eur) SELECT currency, rate_date, per_eur FROM ref_fx_rate WHERE currency IS NOT NULL",
            [])
    }
}
