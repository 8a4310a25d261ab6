import Foundation

/// The engine's incremental pieces (kept out of RuleEngine.swift; called from `evaluate(rule:…, scope:)`).
extension RuleEngine {
    /// The rows whose entity is in `scope`; nil when a row's scope key cannot be told.
    static func rowsInScope(_ rows: ResultRows, _ scope: RuleScope) -> ResultRows? {
        var kept = ResultRows(columns: rows.columns)
        for index in rows.indices {
            guard let inScope = scope.contains(row: rows.dictionary(at: index)) else { return nil }
            if inScope { kept.values.append(rows.values[index]) }
        }
        return kept
    }

    /// Whether the scope of every standing earlier finding can be told.
    static func priorDecidable(_ prior: [String: StoredFinding], _ scope: RuleScope) -> Bool {
        prior.values.allSatisfy {
            $0.finding.status == .resolved || scope.contains(entityKey: $0.finding.entityKey) != nil
        }
    }

    /// Rows the engine prices at `:now`: an amount and currency, but neither `amount_ref` nor `purchase_date`.
    static func pricedAtNow(_ rows: ResultRows) -> Int {
        // Read by position: no dictionary per row for four columns.
        guard let amount = rows.position(of: "amount"), let currency = rows.position(of: "currency") else { return 0 }
        let amountRef = rows.position(of: "amount_ref")
        let purchaseDate = rows.position(of: "purchase_date")
        func isNull(_ row: [SQLValue], _ position: Int) -> Bool { position < row.count ? row[position].isNull : true }
        return rows.values.filter { row in
            !isNull(row, amount) && !isNull(row, currency) && (amountRef.map { isNull(row, $0) } ?? true)
                && (purchaseDate.map { isNull(row, $0) } ?? true)
        }.count
    }

    /// Evaluates `rule` fully after an incremental evaluation could not be done soundly.
    func fullFallback(
        _ rule: Rule, _ runID: Int64, _ now: Int64, _ since: Int64, _ fx: FXTable, _ reason: String
    ) -> Evaluation {
        var evaluation = evaluate(rule: rule, runID: runID, now: now, since: since, fx: fx, scope: nil)
        evaluation.stats.mode = "full (\(reason))"
        return evaluation
    }

    /// Keeps an earlier finding outside the scope as a full evaluation would have produced it again: same
    /// content, status recurring (suppressed stays suppressed), this run.
    func carryOver(_ earlier: Finding, runID: Int64, into evaluation: inout Evaluation) {
        var finding = earlier
        finding.runID = runID
        if finding.status != .suppressed { finding.status = .recurring }
        switch (finding.status, finding.outcome) {
        case (.suppressed, _): evaluation.stats.suppressed += 1
        case (_, .inconclusive): evaluation.stats.inconclusive += 1
        default:
            evaluation.stats.hits += 1
            evaluation.stats.recurring += 1
        }
        evaluation.stats.carried += 1
        evaluation.carried.append(finding)
    }
}
