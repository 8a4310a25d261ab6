import Foundation

/// Validation of a rule's `incremental:` block: the scoped expansion of the query prepares, reads only the
/// documented views (and the scope table its macros add), returns the same columns as the full query, and
/// every time query prepares and returns `key` and `at` (and `kind` when the rule's kind comes from a column).
extension RuleValidator {
    func validateIncremental(_ rule: Rule, database: SQLiteDatabase, resultColumns: Set<String>) -> [RuleIssue] {
        guard let incremental = rule.incremental else { return [] }
        var issues: [RuleIssue] = []
        let line = rule.line(of: "incremental")
        func add(_ message: String) {
            issues.append(RuleIssue(severity: .error, file: rule.file, line: line, ruleID: rule.id, message: message))
        }
        let auditor = SQLAccessAuditor()
        do {
            let prepared = try auditor.prepare(incremental.scopedQuery(ruleID: rule.id), on: database)
            if !resultColumns.isEmpty, Set(prepared.columns) != resultColumns {
                add("the scoped query returns other columns than the full query")
            }
        } catch {
            add("the scoped query (incremental expansion) does not prepare: \(error)")
        }
        for violation in auditor.violations where !violation.contains("'incremental_scope'") {
            add("scoped query \(violation)")
        }
        if !resultColumns.isEmpty, let column = incremental.kindColumn, !resultColumns.contains(column) {
            add("incremental.kind_column '\(column)' is not in the query's result")
        }
        for (index, query) in incremental.timeQueries.enumerated() {
            let timeAuditor = SQLAccessAuditor()
            do {
                let prepared = try timeAuditor.prepare(Self.timeQueryForPlanning(query), on: database)
                let columns = Set(prepared.columns)
                for needed in ["key", "at"] where !columns.contains(needed) {
                    add("time query \(index + 1) returns no '\(needed)' column")
                }
                if incremental.kind == nil, !columns.contains("kind") {
                    add("time query \(index + 1) returns no 'kind' column (the rule's kind comes from kind_column)")
                }
                let declared = Set(rule.params.map(\.name))
                for name in prepared.parameters
                where !declared.contains(name) && !Rule.reservedParams.contains(name)
                    && !Rule.timeQueryParams.contains(name)
                {
                    add("time query \(index + 1) uses unknown parameter :\(name)")
                }
            } catch {
                add("time query \(index + 1) does not prepare: \(error)")
            }
            for violation in timeAuditor.violations { add("time query \(index + 1) \(violation)") }
        }
        return issues
    }

    /// A time query as the planner runs it, with the previous evaluation's now as a literal.
    static func timeQueryForPlanning(_ query: String) -> String {
        "SELECT * FROM (\(query)) moments WHERE moments.at >= 0 AND moments.at <= :now"
    }

    /// Copies of `rule` whose query is its scoped expansion, resp. one of its time queries (no evidence), for
    /// checks that plan a rule's query (PostgreSQL).
    static func incrementalVariants(of rule: Rule) -> [Rule] {
        guard let incremental = rule.incremental else { return [] }
        var scoped = rule
        scoped.query = incremental.scopedQuery(ruleID: rule.id)
        scoped.evidenceQueries = []
        var variants = [scoped]
        for query in incremental.timeQueries {
            var time = scoped
            time.query = timeQueryForPlanning(query)
            variants.append(time)
        }
        return variants
    }
}
