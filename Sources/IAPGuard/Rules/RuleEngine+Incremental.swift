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
        rows.indices.filter { index in
            let row = rows.dictionary(at: index)
            return (row["amount"].map { !$0.isNull } ?? false) && (row["currency"].map { !$0.isNull } ?? false)
                && (row["amount_ref"]?.isNull ?? true) && (row["purchase_date"]?.isNull ?? true)
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
