import Foundation

/// What a candidate rule set would flag on stored history, side by side with the current (baseline) rules.
///
/// Both sets are evaluated on the same store with `:since` / `:now` bound to the window, without touching
/// stored findings; hits are compared per rule id by `finding_id` (rule id + entity key).
public struct RuleBacktest {
    /// The comparison for one rule id.
    public struct Row: Sendable, Hashable {
        public var ruleID: String
        public var baselineHits: Int
        public var candidateHits: Int
        /// Hits only the candidate raises.
        public var new: [Finding]
        /// Hits only the baseline raises.
        public var gone: [Finding]
        public var unchanged: Int
        /// Query errors, if any (`baseline: …` / `candidate: …`).
        public var errors: [String]
    }

    public let store: any PurchaseStore
    public let referenceCurrency: String
    public let paramOverrides: [String: [String: SQLValue]]

    public init(store: any PurchaseStore, referenceCurrency: String, paramOverrides: [String: [String: SQLValue]] = [:])
    {
        self.store = store
        self.referenceCurrency = referenceCurrency
        self.paramOverrides = paramOverrides
    }

    /// Compares `candidate` with `baseline` over `since...until` (epoch ms). Hits are unsuppressed, conclusive
    /// findings.
    public func compare(candidate: [Rule], baseline: [Rule], since: Int64, until: Int64) throws -> [Row] {
        let engine = RuleEngine(store: store, referenceCurrency: referenceCurrency, paramOverrides: paramOverrides)
        engine.usesStoredFindings = false
        let before = try engine.evaluate(rules: baseline, runID: 0, now: until, since: since)
        let after = try engine.evaluate(rules: candidate, runID: 0, now: until, since: since)
        func hits(_ result: RuleRunResult) -> [String: [String: Finding]] {
            var byRule: [String: [String: Finding]] = [:]
            for f in result.findings where f.outcome == .hit && f.status != .suppressed && f.status != .resolved {
                byRule[f.ruleID, default: [:]][f.findingID] = f
            }
            return byRule
        }
        let old = hits(before)
        let new = hits(after)
        let ids = Set(baseline.map(\.id)).union(candidate.map(\.id)).sorted()
        return ids.map { id in
            let o = old[id] ?? [:]
            let n = new[id] ?? [:]
            var errors: [String] = []
            if let e = before.stats.first(where: { $0.ruleID == id })?.error { errors.append("baseline: \(e)") }
            if let e = after.stats.first(where: { $0.ruleID == id })?.error { errors.append("candidate: \(e)") }
            return Row(
                ruleID: id, baselineHits: o.count, candidateHits: n.count,
                new: n.filter { o[$0.key] == nil }.sorted { $0.key < $1.key }.map(\.value),
                gone: o.filter { n[$0.key] == nil }.sorted { $0.key < $1.key }.map(\.value),
                unchanged: n.keys.filter { o[$0] != nil }.count, errors: errors)
        }
    }
}
