import Foundation

/// Checks that rules run on PostgreSQL too: each query and evidence query is planned (`EXPLAIN`, nothing
/// executes) against the store's schema, brought up to date first, with the rule's parameters bound as a
/// run would bind them. Evidence queries get NULL for the result columns they use.
public final class PostgresRuleCheck {
    let store: PostgresStore

    /// Connects and migrates the schema named by `settings`.
    public init(settings: PostgresSettings) throws {
        store = try PostgresStore(settings: settings)
        try store.migrate()
    }

    /// The problems PostgreSQL reports for `rule` (empty when it plans).
    public func check(_ rule: Rule, overrides: [String: SQLValue] = [:], referenceCurrency: String = "USD")
        -> [RuleIssue]
    {
        var issues: [RuleIssue] = []
        var parameters = rule.boundParameters(
            overrides: overrides, now: Clock.nowMillis(), since: 0, referenceCurrency: referenceCurrency)
        // A time query may name the previous evaluation's now (see `IncrementalPlanner.timeKeys`).
        for name in Rule.timeQueryParams { parameters[name] = .integer(0) }
        let location = store.location
        func plan(_ sql: String, line: Int, what: String, nullFill: Bool) {
            var bound = parameters
            if nullFill {
                for name in store.dialect.named(sql).names where bound[name] == nil { bound[name] = .null }
            }
            do {
                try store.session.query("EXPLAIN " + sql, named: bound) { _, _ in }
            } catch {
                issues.append(
                    RuleIssue(
                        severity: .error, file: rule.file, line: line, ruleID: rule.id,
                        message: "\(what) does not plan on PostgreSQL (\(location)): \(error)"))
            }
        }
        plan(rule.query, line: rule.line(of: "query"), what: "query", nullFill: false)
        for query in rule.evidenceQueries {
            plan(query.sql, line: query.line, what: "evidence query '\(query.kind)'", nullFill: true)
        }
        return issues
    }
}
