import Foundation

/// Inline tests in incremental mode: every fixture row counts as new, so the scope holds every key, and the
/// scoped evaluation must meet the test's expectations and produce exactly the findings of the full one.
extension RuleTester {
    func checkIncremental(
        _ test: RuleTest, of rule: Rule, engine: RuleEngine, store: any SQLBackedStore, full: RuleEngine.Evaluation
    ) throws -> [String] {
        guard rule.incremental != nil else { return [] }
        let builder = ScopeBuilder(database: store.connection)
        try builder.build(sinceRunID: Int64.min, fxChangedFrom: nil)
        let planner = IncrementalPlanner(
            store: store, referenceCurrency: engine.referenceCurrency, paramOverrides: engine.paramOverrides)
        try builder.add(
            ruleID: rule.id, keys: try planner.timeKeys(rule, previousNow: Int64.min / 2, now: test.now))
        guard let scope = try RuleScope.load(rule: rule, from: store.connection) else { return [] }
        let evaluation = engine.evaluate(
            rule: rule, runID: 1, now: test.now, since: 0, fx: try FXTable(store: store), scope: scope)
        if let error = evaluation.stats.error { return ["incremental: rule query failed: \(error)"] }
        var failures = check(test, evaluation.items).map { "incremental: " + $0 }
        func described(_ items: [RuleEngine.Item]) -> [String] {
            items.map {
                "\($0.finding.findingID) \($0.finding.level.rawValue) \($0.finding.outcome.rawValue) \($0.finding.summary)"
            }
            .sorted()
        }
        if described(evaluation.items) != described(full.items) {
            failures.append("incremental: the scoped evaluation's findings differ from the full evaluation's")
        }
        return failures
    }
}
