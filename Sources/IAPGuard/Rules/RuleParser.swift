import Foundation
import Yams

/// Turns one rule file's YAML into a ``Rule``; every error carries the file and the line (Yams marks).
public struct RuleParser: Sendable {
    /// Top-level fields a rule file may have.
    public static let knownFields: Set<String> = [
        "id", "title", "description", "version", "status", "level", "tags", "params", "query", "entity_key",
        "evidence", "falsepositives", "runbook", "exceptions", "tests", "incremental",
    ]
    static let requiredFields = ["id", "title", "description", "version", "status", "level", "query", "entity_key"]

    public let file: String
    /// Whether the inline `tests:` are parsed (`rules test` and `rules validate` need them; a run does not, and
    /// skips them: they are most of a rule file).
    public var includesTests = true

    public init(file: String) {
        self.file = file
    }

    /// Parses rule YAML text.
    public func parse(_ text: String) throws(RuleLoadError) -> Rule {
        let root: Node?
        do {
            // Yams' default resolver types every plain scalar (keys and SQL lines too) with regular
            // expressions, which made loading the rules a noticeable fixed cost of every run. Scalars are
            // composed untyped here; ``sqlValue(_:_:)`` types the few that become SQL values.
            root = try Yams.compose(yaml: text, .basic)
        } catch let error as YamlError {
            throw yamlError(error)
        } catch {
            throw RuleLoadError(file: file, line: 1, message: "cannot parse YAML: \(error)")
        }
        guard let root, case .mapping(let mapping) = root else {
            throw RuleLoadError(file: file, line: 1, message: "a rule file must be a YAML mapping of fields")
        }
        var fields: [String: Node] = [:]
        var lines: [String: Int] = [:]
        for (key, value) in mapping {
            guard let name = key.scalar?.string else { throw fail(key, "field names must be text") }
            guard Self.knownFields.contains(name) else {
                throw fail(key, "unknown field '\(name)' (known: \(Self.knownFields.sorted().joined(separator: ", ")))")
            }
            fields[name] = value
            lines[name] = key.mark?.line ?? 1
        }
        for name in Self.requiredFields where fields[name] == nil {
            throw RuleLoadError(file: file, line: 1, message: "missing required field '\(name)'")
        }
        func field(_ name: String) throws(RuleLoadError) -> String {
            guard let node = fields[name] else { return "" }
            return try scalarText(node, name)
        }
        let id = try field("id")
        guard !id.isEmpty, id.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }) else {
            throw fail(fields["id"], "id must be non-empty letters, digits, '-', '_' or '.'")
        }
        let statusText = try field("status")
        guard let status = Rule.Status(rawValue: statusText) else {
            throw fail(
                fields["status"],
                "bad status '\(statusText)' (one of: \(Rule.Status.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        let levelText = try field("level")
        guard let level = Finding.Level(rawValue: levelText) else {
            throw fail(
                fields["level"],
                "bad level '\(levelText)' (one of: \(Finding.Level.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        let template = try field("query")
        guard !template.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
            throw fail(fields["query"], "query is empty")
        }
        let query: String
        let macroKinds: [ScopeKind]
        do {
            query = try RuleIncremental.fullQuery(template)
            macroKinds = try RuleIncremental.macroKinds(in: template)
        } catch {
            throw fail(fields["query"], "query: \(error)")
        }
        let entityKey = try stringList(fields["entity_key"], "entity_key")
        guard !entityKey.isEmpty else { throw fail(fields["entity_key"], "entity_key needs at least one column") }

        var rule = Rule(
            id: id, title: try field("title"), description: try field("description"), version: try field("version"),
            status: status, level: level, query: query, entityKey: entityKey, file: file, lines: lines)
        rule.tags = try stringList(fields["tags"], "tags")
        rule.params = try parseParams(fields["params"])
        (rule.evidenceColumns, rule.evidenceQueries) = try parseEvidence(fields["evidence"])
        rule.falsePositives = try stringList(fields["falsepositives"], "falsepositives")
        rule.runbook = try field("runbook")
        rule.exceptions = try parseExceptions(fields["exceptions"])
        rule.tests = includesTests ? try parseTests(fields["tests"]) : []
        rule.incremental = try parseIncremental(
            fields["incremental"], template: template, macroKinds: macroKinds, entityKey: entityKey,
            queryNode: fields["query"])
        return rule
    }

    // MARK: Pieces

    /// The `incremental:` block: `key` (an entity_key column), `kind` or `kind_column`, optional `time`
    /// (one query or a list). A query with `{{scope …}}` macros needs the block, and the block needs a macro.
    private func parseIncremental(
        _ node: Node?, template: String, macroKinds: [ScopeKind], entityKey: [String], queryNode: Node?
    ) throws(RuleLoadError) -> RuleIncremental? {
        guard let node else {
            if !macroKinds.isEmpty {
                throw fail(queryNode, "the query has {{scope …}} macros but the rule has no incremental: block")
            }
            return nil
        }
        guard case .mapping(let mapping) = node else {
            throw fail(node, "incremental must be a mapping (key, kind or kind_column, time)")
        }
        var key: String?
        var kind: ScopeKind?
        var kindColumn: String?
        var time: [String] = []
        var reevaluatesOpenFindings = false
        var sharedKeys = Set(ScopeKind.sharedKinds)
        var sharedByHolders = false
        for (k, v) in mapping {
            switch k.scalar?.string {
            case "key": key = try scalarText(v, "incremental.key")
            case "kind":
                let text = try scalarText(v, "incremental.kind")
                guard let parsed = ScopeKind(rawValue: text) else {
                    throw fail(
                        v,
                        "incremental.kind '\(text)' is not a scope kind (one of: \(ScopeKind.allCases.map(\.rawValue).joined(separator: ", ")))"
                    )
                }
                kind = parsed
            case "kind_column": kindColumn = try scalarText(v, "incremental.kind_column")
            case "time":
                if case .sequence(let items) = v {
                    for item in items { time.append(try scalarText(item, "incremental.time")) }
                } else {
                    time.append(try scalarText(v, "incremental.time"))
                }
            case "reevaluate_open_findings":
                switch try scalarText(v, "incremental.reevaluate_open_findings") {
                case "true": reevaluatesOpenFindings = true
                case "false": reevaluatesOpenFindings = false
                default: throw fail(v, "incremental.reevaluate_open_findings must be true or false")
                }
            case "shared_keys":
                let allowed = ScopeKind.sharedKinds.map(\.rawValue).joined(separator: ", ")
                guard case .sequence(let items) = v else {
                    throw fail(v, "incremental.shared_keys must be a list (of: \(allowed); [] for none)")
                }
                sharedKeys = []
                for item in items {
                    let text = try scalarText(item, "incremental.shared_keys")
                    guard let parsed = ScopeKind(rawValue: text), ScopeKind.sharedKinds.contains(parsed) else {
                        throw fail(item, "incremental.shared_keys: '\(text)' is not one of \(allowed)")
                    }
                    sharedKeys.insert(parsed)
                }
            case "shared_by":
                switch try scalarText(v, "incremental.shared_by") {
                case "purchases": sharedByHolders = false
                case "holders": sharedByHolders = true
                default: throw fail(v, "incremental.shared_by must be purchases or holders")
                }
            default:
                throw fail(
                    k,
                    "incremental: unknown field (use key, kind, kind_column, time, reevaluate_open_findings, shared_keys, shared_by)"
                )
            }
        }
        guard let key, entityKey.contains(key) else {
            throw fail(
                node, "incremental.key must name one of the entity_key columns (\(entityKey.joined(separator: ", ")))")
        }
        switch (kind, kindColumn) {
        case (.some, .some), (.none, .none):
            throw fail(
                node, "incremental needs exactly one of kind (a scope kind) or kind_column (an entity_key column)")
        case (.none, .some(let column)) where !entityKey.contains(column) || column == key:
            throw fail(node, "incremental.kind_column must name another entity_key column")
        default: break
        }
        guard !macroKinds.isEmpty else {
            throw fail(node, "an incremental rule's query needs at least one {{scope KIND: expression}} macro")
        }
        if sharedByHolders, !sharedKeys.isSubset(of: ScopeKind.heldKinds) {
            throw fail(
                node, "incremental.shared_by: holders needs shared_keys of app_account_token, application_username only"
            )
        }
        for query in time where query.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw fail(node, "incremental.time: a query is empty")
        }
        return RuleIncremental(
            keyColumn: key, kind: kind, kindColumn: kindColumn, timeQueries: time, template: template,
            macroKinds: macroKinds, reevaluatesOpenFindings: reevaluatesOpenFindings, sharedKeys: sharedKeys,
            sharedByHolders: sharedByHolders)
    }

    private func parseParams(_ node: Node?) throws(RuleLoadError) -> [Rule.Param] {
        guard let node else { return [] }
        guard case .mapping(let mapping) = node else { throw fail(node, "params must be a mapping name: default") }
        var params: [Rule.Param] = []
        for (key, value) in mapping {
            let name = try scalarText(key, "params")
            guard isIdentifier(name) else { throw fail(key, "parameter name '\(name)' is not an identifier") }
            guard !Rule.reservedParams.contains(name), !Rule.timeQueryParams.contains(name) else {
                throw fail(key, "parameter ':\(name)' is reserved (bound by the engine)")
            }
            if case .mapping(let detail) = value {
                var defaultValue: SQLValue?
                var description: String?
                for (k, v) in detail {
                    switch k.scalar?.string {
                    case "default": defaultValue = try sqlValue(v, "params.\(name).default")
                    case "description": description = try scalarText(v, "params.\(name).description")
                    default: throw fail(k, "params.\(name): unknown field (use default, description)")
                    }
                }
                guard let defaultValue else { throw fail(value, "params.\(name) needs a default") }
                params.append(Rule.Param(name: name, defaultValue: defaultValue, description: description))
            } else {
                params.append(Rule.Param(name: name, defaultValue: try sqlValue(value, "params.\(name)")))
            }
        }
        return params
    }

    private func parseEvidence(_ node: Node?) throws(RuleLoadError) -> ([String], [Rule.EvidenceQuery]) {
        guard let node else { return ([], []) }
        guard case .mapping(let mapping) = node else { throw fail(node, "evidence must be a mapping (columns, rows)") }
        var columns: [String] = []
        var queries: [Rule.EvidenceQuery] = []
        for (key, value) in mapping {
            switch key.scalar?.string {
            case "columns": columns = try stringList(value, "evidence.columns")
            case "rows":
                guard case .sequence(let sequence) = value else { throw fail(value, "evidence.rows must be a list") }
                for item in sequence {
                    guard case .mapping(let entry) = item else { throw fail(item, "evidence row must be a mapping") }
                    var kind: String?
                    var sql: String?
                    var limit = 5
                    for (k, v) in entry {
                        switch k.scalar?.string {
                        case "kind": kind = try scalarText(v, "evidence.rows.kind")
                        case "query": sql = try scalarText(v, "evidence.rows.query")
                        case "limit":
                            guard let n = Self.typed(v).int, n > 0, n <= Rule.maxEvidenceRows else {
                                throw fail(v, "evidence.rows.limit must be 1...\(Rule.maxEvidenceRows)")
                            }
                            limit = n
                        default: throw fail(k, "evidence row: unknown field (use kind, query, limit)")
                        }
                    }
                    guard let kind, let sql else { throw fail(item, "evidence row needs kind and query") }
                    queries.append(Rule.EvidenceQuery(kind: kind, sql: sql, limit: limit, line: item.mark?.line ?? 1))
                }
            default: throw fail(key, "evidence: unknown field (use columns, rows)")
            }
        }
        return (columns, queries)
    }

    private func parseExceptions(_ node: Node?) throws(RuleLoadError) -> [RuleException] {
        guard let node else { return [] }
        guard case .sequence(let sequence) = node else { throw fail(node, "exceptions must be a list") }
        var exceptions: [RuleException] = []
        for item in sequence {
            guard case .mapping(let mapping) = item else { throw fail(item, "an exception must be a mapping") }
            var match: [String: String] = [:]
            var owner = ""
            var reason = ""
            var expires = ""
            for (k, v) in mapping {
                switch k.scalar?.string {
                case "match": match = try textMap(v, "exceptions.match")
                case "owner": owner = try scalarText(v, "exceptions.owner")
                case "reason": reason = try scalarText(v, "exceptions.reason")
                case "expires": expires = try scalarText(v, "exceptions.expires")
                default: throw fail(k, "exception: unknown field (use match, owner, reason, expires)")
                }
            }
            guard !match.isEmpty else { throw fail(item, "an exception needs a non-empty match") }
            guard !owner.isEmpty, !reason.isEmpty else { throw fail(item, "an exception needs an owner and a reason") }
            guard EpochTime.parseDay(expires) != nil else {
                throw fail(item, "an exception needs expires: YYYY-MM-DD (got '\(expires)')")
            }
            exceptions.append(
                RuleException(match: match, owner: owner, reason: reason, expires: expires, line: item.mark?.line ?? 1))
        }
        return exceptions
    }

    private func parseTests(_ node: Node?) throws(RuleLoadError) -> [RuleTest] {
        guard let node else { return [] }
        guard case .sequence(let sequence) = node else { throw fail(node, "tests must be a list") }
        var tests: [RuleTest] = []
        for item in sequence {
            guard case .mapping(let mapping) = item else { throw fail(item, "a test must be a mapping") }
            var test = RuleTest(name: "", given: [], line: item.mark?.line ?? 1)
            for (k, v) in mapping {
                switch k.scalar?.string {
                case "name": test.name = try scalarText(v, "tests.name")
                case "now":
                    let raw = try scalarText(v, "tests.now")
                    guard let now = EpochTime.parse(raw) else { throw fail(v, "tests.now: not a time: '\(raw)'") }
                    test.now = now
                case "params":
                    guard case .mapping(let params) = v else { throw fail(v, "tests.params must be a mapping") }
                    for (pk, pv) in params {
                        test.params[try scalarText(pk, "tests.params")] = try sqlValue(pv, "tests.params")
                    }
                case "given":
                    guard case .mapping(let views) = v else { throw fail(v, "tests.given must map view names to rows") }
                    for (vk, vv) in views {
                        let view = try scalarText(vk, "tests.given")
                        guard case .sequence(let rows) = vv else {
                            throw fail(vv, "tests.given.\(view) must be a list of rows")
                        }
                        var fixtureRows: [RuleTest.FixtureRow] = []
                        for row in rows {
                            guard case .mapping(let columns) = row else {
                                throw fail(row, "a fixture row must be a mapping")
                            }
                            var values: [String: SQLValue] = [:]
                            for (ck, cv) in columns {
                                values[try scalarText(ck, "column")] = try sqlValue(cv, "tests.given.\(view)")
                            }
                            fixtureRows.append(RuleTest.FixtureRow(values: values, line: row.mark?.line ?? 1))
                        }
                        test.given.append((view: view, rows: fixtureRows))
                    }
                case "hits": test.hits = try expectations(v, "tests.hits")
                case "non_hits": test.nonHits = try expectations(v, "tests.non_hits")
                case "inconclusive": test.inconclusive = try expectations(v, "tests.inconclusive")
                case "suppressed": test.suppressed = try expectations(v, "tests.suppressed")
                case "strict":
                    guard let flag = Self.typed(v).bool else { throw fail(v, "tests.strict must be true or false") }
                    test.strict = flag
                default:
                    throw fail(
                        k,
                        "test: unknown field (use name, now, params, given, hits, non_hits, inconclusive, suppressed, strict)"
                    )
                }
            }
            guard !test.name.isEmpty else { throw fail(item, "a test needs a name") }
            tests.append(test)
        }
        return tests
    }

    private func expectations(_ node: Node, _ context: String) throws(RuleLoadError) -> [RuleTest.Expectation] {
        guard case .sequence(let sequence) = node else {
            throw fail(node, "\(context) must be a list of column: value maps")
        }
        var result: [RuleTest.Expectation] = []
        for item in sequence {
            let fields = try textMap(item, context)
            guard !fields.isEmpty else { throw fail(item, "\(context): an expectation needs at least one column") }
            result.append(RuleTest.Expectation(fields: fields, line: item.mark?.line ?? 1))
        }
        return result
    }

    // MARK: Scalars

    private func scalarText(_ node: Node, _ context: String) throws(RuleLoadError) -> String {
        guard case .scalar(let scalar) = node else { throw fail(node, "\(context) must be a single value") }
        return scalar.string
    }

    private func stringList(_ node: Node?, _ context: String) throws(RuleLoadError) -> [String] {
        guard let node else { return [] }
        switch node {
        case .scalar(let scalar): return scalar.string.isEmpty ? [] : [scalar.string]
        case .sequence(let sequence):
            var values: [String] = []
            for item in sequence { values.append(try scalarText(item, context)) }
            return values
        default: throw fail(node, "\(context) must be a list")
        }
    }

    private func textMap(_ node: Node, _ context: String) throws(RuleLoadError) -> [String: String] {
        guard case .mapping(let mapping) = node else { throw fail(node, "\(context) must be a mapping") }
        var values: [String: String] = [:]
        for (k, v) in mapping {
            let key = try scalarText(k, context)
            values[key] = try sqlValue(v, context).textValue ?? ""
        }
        return values
    }

    /// A YAML scalar as a SQL value: int → integer, float → real, bool → 1/0, null → NULL, else text.
    func sqlValue(_ node: Node, _ context: String) throws(RuleLoadError) -> SQLValue {
        guard case .scalar(let scalar) = node else { throw fail(node, "\(context) must be a single value") }
        let node = Self.typed(node)
        switch Tag.Name(rawValue: node.tag.rawValue) {
        case .int: return node.int.map { .integer(Int64($0)) } ?? .text(scalar.string)
        case .float: return node.float.map(SQLValue.real) ?? .text(scalar.string)
        case .bool: return node.bool.map { .integer($0 ? 1 : 0) } ?? .text(scalar.string)
        case .null: return .null
        default: return .text(scalar.string)
        }
    }

    /// `node` typed as YAML's default resolver types it: the file is composed untyped (see ``parse(_:)``), so
    /// a plain scalar is resolved again here (quoted ones stay text), for the few scalars read as values.
    static func typed(_ node: Node) -> Node {
        guard case .scalar(let scalar) = node, scalar.style == .plain, Tag.Name(rawValue: node.tag.rawValue) == .str
        else { return node }
        return .scalar(Node.Scalar(scalar.string, .implicit, .plain, scalar.mark))
    }

    private func isIdentifier(_ name: String) -> Bool {
        guard let first = name.first, first.isLetter || first == "_" else { return false }
        return name.allSatisfy { ($0.isLetter || $0.isNumber || $0 == "_") && $0.isASCII }
    }

    private func fail(_ node: Node?, _ message: String) -> RuleLoadError {
        RuleLoadError(file: file, line: node?.mark?.line ?? 1, column: node?.mark?.column, message: message)
    }

    private func yamlError(_ error: YamlError) -> RuleLoadError {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let prefix = context.map { "\($0.text) " } ?? ""
            return RuleLoadError(file: file, line: mark.line, column: mark.column, message: "YAML: \(prefix)\(problem)")
        case .duplicatedKeysInMapping(let duplicates, let context):
            return RuleLoadError(
                file: file, line: context.mark.line, column: context.mark.column,
                message: "YAML: duplicate keys \(duplicates.joined(separator: ", "))")
        case .reader(let problem, _, _, _):
            return RuleLoadError(file: file, line: 1, message: "YAML: \(problem)")
        default:
            return RuleLoadError(file: file, line: 1, message: "YAML: \(error)")
        }
    }
}
