import Foundation

/// One problem `rules validate` found, with its location.
public struct RuleIssue: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable {
        case error, warning
    }
    public var severity: Severity
    public var file: String
    public var line: Int
    public var ruleID: String?
    public var message: String

    public init(severity: Severity, file: String, line: Int, ruleID: String?, message: String) {
        self.severity = severity
        self.file = file
        self.line = line
        self.ruleID = ruleID
        self.message = message
    }

    /// `file:line: error|warning: [rule] message`.
    public var description: String {
        "\(file):\(line): \(severity.rawValue): \(ruleID.map { "\($0): " } ?? "")\(message)"
    }
}

/// Checks rules against the real schema: each query (and evidence query) is prepared in an in-memory store
/// after `migrate()`, reading only the documented views and portable functions; every `:param` it uses is
/// declared; the entity key, evidence and exception columns exist in its result; exceptions that expired
/// are warned about.
public struct RuleValidator {
    public var paramOverrides: [String: [String: SQLValue]]
    /// When set, every query is also planned on this PostgreSQL database (see ``PostgresRuleCheck``).
    public var postgres: PostgresSettings?

    public init(paramOverrides: [String: [String: SQLValue]] = [:], postgres: PostgresSettings? = nil) {
        self.paramOverrides = paramOverrides
        self.postgres = postgres
    }

    /// Validates `rules` as of `now` (epoch ms; exceptions expire relative to it).
    public func validate(_ rules: [Rule], now: Int64) throws -> [RuleIssue] {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        var issues: [RuleIssue] = []
        let ruleIDs = Set(rules.map(\.id))
        for ruleID in paramOverrides.keys.sorted() where !ruleIDs.contains(ruleID) {
            issues.append(
                RuleIssue(
                    severity: .warning, file: "config", line: 0, ruleID: ruleID,
                    message: "rule_params for an unknown rule"))
        }
        for rule in rules { issues += validate(rule, database: store.database, now: now) }
        if let postgres {
            let check = try PostgresRuleCheck(settings: postgres)
            for rule in rules {
                issues += check.check(rule, overrides: paramOverrides[rule.id] ?? [:])
                for variant in Self.incrementalVariants(of: rule) {
                    issues += check.check(variant, overrides: paramOverrides[rule.id] ?? [:])
                }
            }
        }
        return issues
    }

    func validate(_ rule: Rule, database: SQLiteDatabase, now: Int64) -> [RuleIssue] {
        var issues: [RuleIssue] = []
        func add(_ severity: RuleIssue.Severity, _ line: Int, _ message: String) {
            issues.append(RuleIssue(severity: severity, file: rule.file, line: line, ruleID: rule.id, message: message))
        }
        let declared = Set(rule.params.map(\.name))
        let queryLine = rule.line(of: "query")
        var columns: [String] = []
        let auditor = SQLAccessAuditor()
        do {
            let prepared = try auditor.prepare(rule.query, on: database)
            columns = prepared.columns
            for name in prepared.parameters where !declared.contains(name) && !Rule.reservedParams.contains(name) {
                add(.error, queryLine, "query uses unknown parameter :\(name) (declare it under params)")
            }
            for name in declared.sorted() where !prepared.parameters.contains(name) {
                add(
                    .warning, rule.line(of: "params"),
                    "parameter '\(name)' is declared but the query never uses :\(name)")
            }
        } catch {
            add(.error, queryLine, "query does not prepare: \(error)")
        }
        for violation in auditor.violations { add(.error, queryLine, "query \(violation)") }
        let resultColumns = Set(columns)
        if !columns.isEmpty {
            for key in rule.entityKey where !resultColumns.contains(key) {
                add(.error, rule.line(of: "entity_key"), "entity_key column '\(key)' is not in the query's result")
            }
            for column in rule.evidenceColumns where !resultColumns.contains(column) {
                add(.error, rule.line(of: "evidence"), "evidence column '\(column)' is not in the query's result")
            }
            for exception in rule.exceptions {
                for column in exception.match.keys.sorted() where !resultColumns.contains(column) {
                    add(.error, exception.line, "exception matches on '\(column)', which is not in the query's result")
                }
            }
            for test in rule.tests {
                for expectation in test.hits + test.nonHits + test.inconclusive + test.suppressed {
                    for column in expectation.fields.keys.sorted()
                    where !RuleTest.checkFields.contains(column) && !resultColumns.contains(column) {
                        add(
                            .error, expectation.line,
                            "test '\(test.name)' expects column '\(column)', which is not in the query's result")
                    }
                    if let level = expectation.fields["level"], Finding.Level(rawValue: level) == nil {
                        add(.error, expectation.line, "test '\(test.name)': bad level '\(level)'")
                    }
                }
            }
        }
        for query in rule.evidenceQueries {
            let evidenceAuditor = SQLAccessAuditor()
            do {
                let prepared = try evidenceAuditor.prepare(query.sql, on: database)
                for name in prepared.parameters
                where !declared.contains(name) && !Rule.reservedParams.contains(name) && !resultColumns.contains(name) {
                    add(
                        .error, query.line,
                        "evidence query '\(query.kind)' uses :\(name), neither a result column nor a parameter")
                }
            } catch {
                add(.error, query.line, "evidence query '\(query.kind)' does not prepare: \(error)")
            }
            for violation in evidenceAuditor.violations {
                add(.error, query.line, "evidence query '\(query.kind)' \(violation)")
            }
        }
        for name in (paramOverrides[rule.id] ?? [:]).keys.sorted() where !declared.contains(name) {
            add(.error, rule.line(of: "params"), "rule_params sets unknown parameter '\(name)'")
        }
        for exception in rule.exceptions where exception.isExpired(at: now) {
            add(
                .warning, exception.line,
                "exception (owner \(exception.owner)) expired \(exception.expires): it no longer suppresses")
        }
        issues += validateIncremental(rule, database: database, resultColumns: Set(columns))
        if rule.tests.isEmpty { add(.warning, rule.line(of: "id"), "rule has no inline tests") }
        if rule.runbook.isEmpty { add(.warning, rule.line(of: "id"), "rule has no runbook") }
        return issues
    }
}
