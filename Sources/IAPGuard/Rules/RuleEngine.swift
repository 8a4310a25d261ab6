import Foundation

/// Runs rules against a store and turns their result rows into ``Finding``s.
///
/// Each rule's query is run with its parameters bound by name (defaults, then the config's `rule_params`
/// overrides, then `:now`, `:since` and `:reference_currency`). Every row is one finding about the entity
/// named by the rule's `entity_key` columns; a row with a non-null `inconclusive_reason` is inconclusive.
/// Status across runs comes from the findings stored by earlier runs (the `findings` view).
public final class RuleEngine {
    public let store: any PurchaseStore
    public let referenceCurrency: String
    /// Rule id → parameter name → value (the config's `rule_params`).
    public let paramOverrides: [String: [String: SQLValue]]
    /// Whether statuses use the findings of earlier runs (off for backtests and inline tests).
    public var usesStoredFindings = true
    /// Evidence queries, prepared once and re-bound per finding; one runner per ``evaluate(rules:runID:now:since:)``
    /// (its copies of views are of the store as that call found it).
    private var evidenceRunner: EvidenceQueryRunner?
    /// Rule id → the scope to evaluate it in (incremental mode; see ``IncrementalPlanner``). Rules without
    /// one are evaluated fully.
    public var scopes: [String: RuleScope] = [:]

    /// Rule queries running ahead on read-only connections (``prefetchQueries(of:now:since:readers:extraJobs:scopeCommitted:)``),
    /// and the rules they were started for.
    private var prefetches: [RuleQueryPrefetch] = []
    private var prefetchedRuleIDs: Set<String> = []

    /// Starts the queries of `rules` that will run fully (no scope) on read-only connections of their own,
    /// one per core, the longest (by the latest run, else by SQL length) first, when the store is a SQLite
    /// file in WAL mode: ``evaluate(rules:runID:now:since:)`` then takes their rows instead of querying.
    /// Other stores, and rules in an incremental scope, query on the store's connection as before.
    /// `readers` overrides the number of reader threads (tests); by default one per core, none on one core.
    /// Rules a call before started are not started again.
    public func prefetchFullQueries(of rules: [Rule], now: Int64, since: Int64?, readers: Int? = nil) throws {
        _ = try prefetchQueries(of: rules, now: now, since: since, readers: readers, extraJobs: [])
    }

    /// ``prefetchFullQueries(of:now:since:readers:)`` with `extraJobs` (the run's own whole-store reads) run
    /// on the same readers after the rules; the caller takes them from the returned prefetch, which is nil
    /// when nothing was started. With `scopeCommitted` (the scopes' keys are committed, so readers see them),
    /// the rules in an incremental scope run their scoped queries there too.
    func prefetchQueries(
        of rules: [Rule], now: Int64, since: Int64?, readers: Int?, extraJobs: [RuleQueryPrefetch.Job],
        scopeCommitted: Bool = false
    ) throws -> RuleQueryPrefetch? {
        let readers = readers ?? Self.defaultReaders
        guard readers >= 1, let sqlite = store as? SQLiteStore, let path = sqlite.readerPath else { return nil }
        // A scoped query reads the rule's keys in `incremental_scope`: on a reader only once they are committed.
        let ahead = rules.filter {
            (scopes[$0.id] == nil || scopeCommitted) && !prefetchedRuleIDs.contains($0.id)
        }
        // Even one: it runs beside the findings being made on the store's connection.
        guard !ahead.isEmpty || !extraJobs.isEmpty else { return nil }
        var lastMillis: [String: Double] = [:]
        for row in try sqlite.database.query(
            "SELECT rule_id, query_millis FROM rule_run WHERE run_id = (SELECT MAX(run_id) FROM rule_run)")
        {
            if let id = row[0].textValue, let millis = row[1].doubleValue { lastMillis[id] = millis }
        }
        // Longest first by the latest run's times; a store's first run has none, and then the longest SQL
        // goes first (at 1M the longest queries are mostly the slowest).
        func cost(_ rule: Rule) -> Double {
            lastMillis.isEmpty ? Double(rule.query.utf8.count) : lastMillis[rule.id] ?? 0
        }
        let jobs = ahead.enumerated().sorted { a, b in
            let (x, y) = (cost(a.element), cost(b.element))
            return x != y ? x > y : a.offset < b.offset
        }.map { _, rule in
            RuleQueryPrefetch.Job(
                key: rule.id, sql: scopes[rule.id]?.query ?? rule.query,
                parameters: rule.boundParameters(
                    overrides: paramOverrides[rule.id] ?? [:], now: now, since: since ?? 0,
                    referenceCurrency: referenceCurrency))
        }
        let prefetch = RuleQueryPrefetch(path: path, jobs: jobs + extraJobs, readers: readers)
        prefetches.append(prefetch)
        prefetchedRuleIDs.formUnion(ahead.map(\.id))
        return prefetch
    }

    /// The outcome of `ruleID`'s query from the prefetch it was started on (waiting for it), if any. A
    /// loop, not a lazy `compactMap`: that calls its transform twice, and `take` hands an outcome over once.
    private func takePrefetched(_ ruleID: String) -> RuleQueryPrefetch.Outcome? {
        for prefetch in prefetches {
            if let outcome = prefetch.take(ruleID) { return outcome }
        }
        return nil
    }

    /// Reader threads by default: one per core, at most ``RuleQueryPrefetch/maxReaders``; none on one core.
    static var defaultReaders: Int {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        return cores > 1 ? min(cores, RuleQueryPrefetch.maxReaders) : 0
    }

    /// Whether queries can run on readers: a SQLite file in WAL mode, on more than one core.
    var canPrefetch: Bool { Self.defaultReaders >= 1 && (store as? SQLiteStore)?.readerPath != nil }

    /// Whether queries are running ahead (``prefetchFullQueries(of:now:since:readers:)`` started
    /// some).
    var isPrefetching: Bool { !prefetches.isEmpty }

    deinit { for prefetch in prefetches { prefetch.cancel() } }

    /// Whether each ``Item`` keeps the result row it came from (inline tests match rows; a run does not
    /// need them, and at scale they would be most of the rule stage's memory).
    var keepsResultRows = false

    /// One evaluated row: the finding and the result row it came from (empty unless ``keepsResultRows``).
    struct Item {
        var finding: Finding
        var row: [String: SQLValue]
    }

    /// One rule's evaluation.
    struct Evaluation {
        /// The findings of the rule's result rows, in row order.
        var findings: [Finding] = []
        /// Each finding's result row, when the engine ``keepsResultRows`` (empty otherwise).
        var rows: [[String: SQLValue]] = []
        var resolved: [Finding] = []
        /// Earlier findings outside an incremental scope, carried over unchanged.
        var carried: [Finding] = []
        var stats: RuleRunResult.RuleStats
        var warnings: [String] = []

        /// The findings with their result rows (rows empty unless the engine ``keepsResultRows``).
        var items: [Item] {
            findings.indices.map { Item(finding: findings[$0], row: $0 < rows.count ? rows[$0] : [:]) }
        }
    }

    public init(store: any PurchaseStore, referenceCurrency: String, paramOverrides: [String: [String: SQLValue]] = [:])
    {
        self.store = store
        self.referenceCurrency = referenceCurrency
        self.paramOverrides = paramOverrides
    }

    /// Evaluates `rules` for run `runID` at `now` (epoch ms, the run's `until`); `since` is bound as `:since`
    /// (0 when nil). A rule whose query fails is counted as an error and the others still run.
    public func evaluate(rules: [Rule], runID: Int64, now: Int64, since: Int64? = nil) throws -> RuleRunResult {
        let fx = try FXTable(store: store)
        var result = RuleRunResult()
        let runner = EvidenceQueryRunner(store: store)
        evidenceRunner = runner
        defer {
            runner.close()
            evidenceRunner = nil
        }
        for rule in rules {
            var evaluation = evaluate(rule: rule, runID: runID, now: now, since: since ?? 0, fx: fx)
            // Moved, not copied, when this is the first rule (the pipeline evaluates one rule per call): at
            // scale a rule's findings are hundreds of megabytes.
            if result.findings.isEmpty {
                swap(&result.findings, &evaluation.findings)
            } else {
                result.findings.append(contentsOf: evaluation.findings)
                evaluation.findings = []
            }
            result.findings.append(contentsOf: evaluation.carried)
            result.findings.append(contentsOf: evaluation.resolved)
            result.carriedFindingIDs += evaluation.carried.map(\.findingID)
            result.stats.append(evaluation.stats)
            result.warnings += evaluation.warnings
        }
        return result
    }

    /// Stores a run's findings and statistics (the store must be a ``FindingStore``, e.g. ``SQLiteStore``).
    public func persist(_ result: RuleRunResult, runID: Int64) throws {
        guard let findingStore = store as? FindingStore else {
            throw RuleEngineError(message: "this store cannot keep findings (not a FindingStore)")
        }
        try findingStore.saveFindings(result, runID: runID)
    }

    /// The stable id of a finding: hash of the rule id and the entity-key values.
    public static func findingID(ruleID: String, key: [String?]) -> String {
        let material = ([ruleID] + key.map { $0 ?? "\u{0}" }).joined(separator: "\u{1F}")
        return "F" + Hashing.sha256Hex(material).prefix(31)
    }

    // MARK: One rule

    func evaluate(rule: Rule, runID: Int64, now: Int64, since: Int64, fx: FXTable) -> Evaluation {
        evaluate(rule: rule, runID: runID, now: now, since: since, fx: fx, scope: scopes[rule.id])
    }

    /// Evaluates one rule fully (`scope` nil) or for the keys of `scope` (see RuleEngine+Incremental.swift).
    func evaluate(rule: Rule, runID: Int64, now: Int64, since: Int64, fx: FXTable, scope: RuleScope?) -> Evaluation {
        var evaluation = Evaluation(
            stats: RuleRunResult.RuleStats(ruleID: rule.id, ruleVersion: rule.version, ruleStatus: rule.status))
        evaluation.stats.mode = scope == nil ? "full" : "incremental"

        let overrides = paramOverrides[rule.id] ?? [:]
        let declared = Set(rule.params.map(\.name))
        for name in overrides.keys.sorted() where !declared.contains(name) {
            evaluation.warnings.append("\(rule.id): rule_params has unknown parameter '\(name)' (ignored)")
        }
        let parameters = rule.boundParameters(
            overrides: overrides, now: now, since: since, referenceCurrency: referenceCurrency)
        let clock = ContinuousClock()
        let start = clock.now
        var prefetchedMillis: Double?
        // Set explicitly (a `defer` would run after `evaluation` was already copied out by `return`).
        func recordQueryTime() {
            if let prefetchedMillis {
                evaluation.stats.queryMillis = prefetchedMillis
                return
            }
            let elapsed = start.duration(to: clock.now)
            evaluation.stats.queryMillis =
                Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        }
        // The result is kept as value arrays under one column list: a dictionary per row costs about three
        // times the memory, and a rule can return hundreds of thousands of rows at scale. Each row becomes a
        // dictionary only while it is turned into its finding.
        var rows = ResultRows()
        do {
            if let outcome = takePrefetched(rule.id) {
                prefetchedMillis = outcome.millis
                rows = try outcome.rows.get()
            } else {
                // A failing rule must not stop the others, on PostgreSQL too (a failed statement aborts the
                // transaction there unless it ran in a savepoint).
                try store.isolatingFailure {
                    try store.query(scope?.query ?? rule.query, parameters: parameters) { columns, values in
                        rows.append(columns: columns, values: values)
                    }
                }
            }
            if !rows.isEmpty {
                let missing = rule.entityKey.filter { !rows.columns.contains($0) }
                if !missing.isEmpty {
                    throw RuleEngineError(
                        message: "result has no entity_key column(s) \(missing.joined(separator: ", "))")
                }
            }
        } catch {
            evaluation.stats.error = "\(error)"
            recordQueryTime()
            return evaluation
        }
        recordQueryTime()
        // --- incremental: keep only the rows of scoped entities (undecidable keys: evaluate fully) ---
        if let scope {
            guard let kept = Self.rowsInScope(rows, scope) else {
                return fullFallback(rule, runID, now, since, fx, "a result row has no scope key")
            }
            rows = kept
        }
        evaluation.stats.pricedAtNow = Self.pricedAtNow(rows)
        // --- end incremental ---
        let findingsStart = clock.now

        let prior: [String: StoredFinding]
        var priorUnreadable = false
        do {
            prior = usesStoredFindings ? try storedFindings(ruleID: rule.id) : [:]
        } catch {
            prior = [:]
            priorUnreadable = true
            evaluation.warnings.append("\(rule.id): earlier findings unreadable (\(error)); all findings count as new")
        }
        // --- incremental: earlier findings unreadable or whose scope cannot be told: evaluate fully ---
        if let scope, priorUnreadable || !Self.priorDecidable(prior, scope) {
            return fullFallback(rule, runID, now, since, fx, "an earlier finding has no scope key")
        }
        // --- end incremental ---
        var seen = Set<String>()
        evaluation.findings.reserveCapacity(rows.count)
        for index in rows.indices {
            // Each row is released as it becomes a finding: rows and findings are not both held whole.
            let row = rows.take(at: index)
            let keyValues = rule.entityKey.map { row[$0]?.textValue }
            let id = Self.findingID(ruleID: rule.id, key: keyValues)
            guard seen.insert(id).inserted else { continue }
            var finding = makeFinding(
                rule: rule, row: row, id: id, runID: runID, now: now, fx: fx, warnings: &evaluation.warnings)
            finding.entityKey = zip(rule.entityKey, keyValues).map { EvidenceField(name: $0, value: $1) }
            if let earlier = prior[id] { finding.firstSeenRunID = earlier.finding.firstSeenRunID }
            applyExceptions(rule: rule, row: row, now: now, finding: &finding, warnings: &evaluation.warnings)
            if finding.status != .suppressed { finding.status = prior[id] == nil ? .new : .recurring }
            finding.evidence = evidence(rule: rule, row: row, parameters: parameters, warnings: &evaluation.warnings)
            switch (finding.status, finding.outcome) {
            case (.suppressed, _): evaluation.stats.suppressed += 1
            case (_, .inconclusive): evaluation.stats.inconclusive += 1
            default:
                evaluation.stats.hits += 1
                if finding.status == .new { evaluation.stats.new += 1 }
                if finding.status == .recurring { evaluation.stats.recurring += 1 }
            }
            evaluation.findings.append(finding)
            if keepsResultRows { evaluation.rows.append(row) }
        }
        let decoder = JSONDecoder()
        let json = EvidenceJSON()
        for (id, stored) in prior.sorted(by: { $0.key < $1.key })
        where !seen.contains(id) && stored.finding.status != .resolved {
            // Only an earlier finding that is carried over or resolved is written again: only its evidence
            // is decoded (at scale, decoding every earlier finding's evidence cost seconds and hundreds of MB).
            let earlier = stored.withEvidence(json, decoder)
            // --- incremental: outside the scope, the earlier finding carries over unchanged ---
            if let scope, scope.contains(entityKey: earlier.entityKey) == false {
                carryOver(earlier, runID: runID, into: &evaluation)
                continue
            }
            // --- end incremental ---
            var resolved = earlier
            resolved.status = .resolved
            resolved.runID = runID
            evaluation.resolved.append(resolved)
            evaluation.stats.resolved += 1
        }
        let findingsElapsed = findingsStart.duration(to: clock.now)
        evaluation.stats.findingMillis =
            Double(findingsElapsed.components.seconds) * 1000 + Double(findingsElapsed.components.attoseconds) / 1e15
        return evaluation
    }

    private func makeFinding(
        rule: Rule, row: [String: SQLValue], id: String, runID: Int64, now: Int64, fx: FXTable, warnings: inout [String]
    ) -> Finding {
        var level = rule.level
        if let text = row["level"]?.textValue {
            if let override = Finding.Level(rawValue: text) {
                level = override
            } else {
                warnings.append("\(rule.id): row level '\(text)' is not a level; using \(rule.level.rawValue)")
            }
        }
        let reason = row["inconclusive_reason"]?.textValue
        let keyText = rule.entityKey.map { "\($0)=\(row[$0]?.textValue ?? "NULL")" }.joined(separator: ", ")
        var finding = Finding(
            findingID: id, runID: runID, ruleID: rule.id, ruleVersion: rule.version, ruleTitle: rule.title,
            level: level, status: .new, outcome: reason == nil ? .hit : .inconclusive,
            summary: row["summary"]?.textValue ?? "\(rule.title) (\(keyText))", firstSeenRunID: runID)
        finding.inconclusiveReason = reason
        finding.transactionID = row["transaction_id"]?.textValue
        finding.originalTransactionID = row["original_transaction_id"]?.textValue
        finding.orderID = row["order_id"]?.textValue
        finding.userID = row["user_id"]?.textValue
        finding.bundleID = row["bundle_id"]?.textValue
        finding.productID = row["product_id"]?.textValue
        finding.storefront = row["storefront"]?.textValue
        finding.amount = row["amount"]?.doubleValue.flatMap(Money.rounded)
        finding.currency = row["currency"]?.textValue
        finding.observed = row["observed"].flatMap(Self.display)
        finding.threshold = row["threshold"].flatMap(Self.display)
        if let ref = row["amount_ref"]?.doubleValue {
            finding.amountRef = Money.rounded(ref)
        } else if let amount = finding.amount, let currency = finding.currency {
            let at = row["purchase_date"]?.integerValue ?? now
            finding.amountRef = fx.convert(amount, from: currency, to: referenceCurrency, at: at)
        }
        return finding
    }

    private func applyExceptions(
        rule: Rule, row: [String: SQLValue], now: Int64, finding: inout Finding, warnings: inout [String]
    ) {
        for exception in rule.exceptions where exception.matches(row) {
            if exception.isExpired(at: now) {
                warnings.append(
                    "\(rule.id): exception (\(rule.file):\(exception.line), owner \(exception.owner)) expired \(exception.expires) and no longer suppresses \(finding.findingID)"
                )
                continue
            }
            finding.status = .suppressed
            finding.suppression = Finding.Suppression(
                owner: exception.owner, reason: exception.reason, expires: exception.expires)
            return
        }
    }

    private func evidence(
        rule: Rule, row: [String: SQLValue], parameters: [String: SQLValue], warnings: inout [String]
    ) -> [EvidenceRow] {
        var rows: [EvidenceRow] = []
        if !rule.evidenceColumns.isEmpty {
            rows.append(
                EvidenceRow(
                    kind: "hit",
                    fields: rule.evidenceColumns.map { EvidenceField(name: $0, value: row[$0].flatMap(Self.display)) }))
        }
        for query in rule.evidenceQueries {
            var bound = parameters
            for (column, value) in row { bound[column] = value }
            do {
                let runner = evidenceRunner ?? EvidenceQueryRunner(store: store)
                evidenceRunner = runner
                try runner.run(query.sql, parameters: bound, limit: query.limit) { columns, values in
                    rows.append(
                        EvidenceRow(
                            kind: query.kind,
                            fields: zip(columns, values).map { EvidenceField(name: $0, value: $1.textValue) }))
                }
            } catch {
                warnings.append(
                    "\(rule.id): evidence query '\(query.kind)' (\(rule.file):\(query.line)) failed: \(error)")
            }
        }
        return rows
    }

    /// A value as report text: reals with at most 4 decimals, trailing zeros dropped.
    static func display(_ value: SQLValue) -> String? {
        guard case .real(let v) = value else { return value.textValue }
        if v.rounded() == v, abs(v) < 1e15 { return String(Int64(v)) }
        var text = String(format: "%.4f", v)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    // MARK: Earlier findings

    /// An earlier finding as stored, its evidence still encoded (see ``withEvidence(_:)``).
    struct StoredFinding {
        var finding: Finding
        var evidenceJSON: String?

        /// The finding with its evidence decoded (none when the stored JSON cannot be read).
        func withEvidence(_ json: EvidenceJSON, _ decoder: JSONDecoder) -> Finding {
            var full = finding
            guard let text = evidenceJSON else { return full }
            full.evidence =
                json.decodeRows(text)
                ?? (try? decoder.decode([EvidenceRow].self, from: Data(text.utf8))) ?? []
            return full
        }
    }

    /// The `findings` columns ``storedFinding(_:)`` reads, in its order.
    static let storedColumns = """
        finding_id, rule_id, rule_version, rule_title, level, status, outcome, inconclusive_reason, transaction_id,
        original_transaction_id, order_id, user_id, bundle_id, product_id, storefront, amount, currency, amount_ref,
        observed, threshold, summary, evidence_json, suppression_json, first_run_id, last_run_id, entity_key
        """

    /// A finding from a row of ``storedColumns``, its JSON columns (evidence, suppression, entity key) left
    /// to the caller; nil without a finding id.
    static func storedFinding(_ v: [SQLValue]) -> Finding? {
        guard let id = v[0].textValue else { return nil }
        var f = Finding(
            findingID: id, runID: v[24].integerValue ?? 0, ruleID: v[1].textValue ?? "",
            ruleVersion: v[2].textValue ?? "", ruleTitle: v[3].textValue ?? "",
            level: Finding.Level(rawValue: v[4].textValue ?? "") ?? .medium,
            status: Finding.Status(rawValue: v[5].textValue ?? "") ?? .new,
            outcome: Finding.Outcome(rawValue: v[6].textValue ?? "") ?? .hit, summary: v[20].textValue ?? "",
            firstSeenRunID: v[23].integerValue ?? 0)
        f.inconclusiveReason = v[7].textValue
        f.transactionID = v[8].textValue
        f.originalTransactionID = v[9].textValue
        f.orderID = v[10].textValue
        f.userID = v[11].textValue
        f.bundleID = v[12].textValue
        f.productID = v[13].textValue
        f.storefront = v[14].textValue
        f.amount = v[15].integerValue
        f.currency = v[16].textValue
        f.amountRef = v[17].integerValue
        f.observed = v[18].textValue
        f.threshold = v[19].textValue
        return f
    }

    /// The stored current state of a rule's findings, by id.
    func storedFindings(ruleID: String) throws -> [String: StoredFinding] {
        var result: [String: StoredFinding] = [:]
        let decoder = JSONDecoder()
        let evidenceJSON = EvidenceJSON()
        try store.query(
            "SELECT " + Self.storedColumns + " FROM findings WHERE rule_id = :rule_id",
            parameters: ["rule_id": .text(ruleID)]
        ) { _, v in
            guard var f = Self.storedFinding(v) else { return }
            let id = f.findingID
            // A finding resolved earlier is only looked up (first run, new or recurring), never shown or
            // stored again from here: its JSON columns are not decoded.
            guard f.status != .resolved else {
                result[id] = StoredFinding(finding: f, evidenceJSON: nil)
                return
            }
            f.suppression = v[22].textValue.flatMap {
                try? decoder.decode(Finding.Suppression.self, from: Data($0.utf8))
            }
            f.entityKey =
                v[25].textValue.flatMap {
                    evidenceJSON.decodeFields($0)
                        ?? (try? decoder.decode([EvidenceField].self, from: Data($0.utf8)))
                } ?? []
            result[id] = StoredFinding(finding: f, evidenceJSON: v[21].textValue)
        }
        return result
    }
}

/// An engine-level failure (a store that cannot keep findings, a result without its key columns).
public struct RuleEngineError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
