import Foundation

/// A rule's opt-in to incremental evaluation (its `incremental:` block and the `{{scope …}}` macros of its
/// query; see `docs/rules.md`, *Incremental evaluation*).
///
/// In an incremental run the engine evaluates ``scopedQuery`` — the query with each macro
/// `{{scope KIND: expression}}` expanded to a filter on the run's dirty scope — and keeps only result rows
/// whose entity is in the scope; findings of entities outside the scope carry over unchanged. The rule's
/// author guarantees that, for an entity in the scope, the scoped query returns exactly the rows the full
/// query returns for it (the filters may let other rows through; the engine drops them).
public struct RuleIncremental: Sendable, Hashable {
    /// The `entity_key` column whose value is looked up in the scope.
    public var keyColumn: String
    /// The scope kind of ``keyColumn`` (`kind:`), or nil when it comes from ``kindColumn``.
    public var kind: ScopeKind?
    /// An `entity_key` column whose value names the scope kind of each finding (`kind_column:`).
    public var kindColumn: String?
    /// Queries returning `key`, `at` (epoch ms) and optionally `kind`: the entity `key` may change its
    /// result when `:now` passes `at`. Keys with `at` between the previous evaluation's now and this one
    /// (both included) join the rule's scope.
    public var timeQueries: [String]
    /// The query as written, with its `{{scope …}}` macros.
    public var template: String
    /// The kinds the template's macros filter on.
    public var macroKinds: [ScopeKind]
    /// Every entity with a standing finding of the rule joins its scope on every run
    /// (`reevaluate_open_findings: true`): for a rule whose findings say something that moves with `:now`
    /// (IAP-014's hours since the purchase), so they are computed again instead of carried over.
    public var reevaluatesOpenFindings: Bool
    /// The kinds of ``ScopeKind/sharedKinds`` through which another purchase can change this rule's result
    /// for an entity (`shared_keys:`): the purchases carrying the scope's keys of these kinds join the rule's
    /// scope. Every shared kind when the block does not say (always correct); the catalog's rules name the
    /// few they need.
    public var sharedKeys: Set<ScopeKind>
    /// The rule reads the purchases sharing a token or username only through who holds it: the user ids of
    /// the accounts and orders carrying it (`shared_by: holders`). Only markers whose holders changed then
    /// widen the scope, instead of every marker in it (``ScopeBuilder/widen(ruleID:kinds:heldSince:limit:)``).
    public var sharedByHolders: Bool

    public init(
        keyColumn: String, kind: ScopeKind?, kindColumn: String?, timeQueries: [String], template: String,
        macroKinds: [ScopeKind], reevaluatesOpenFindings: Bool = false,
        sharedKeys: Set<ScopeKind> = Set(ScopeKind.sharedKinds), sharedByHolders: Bool = false
    ) {
        self.keyColumn = keyColumn
        self.kind = kind
        self.kindColumn = kindColumn
        self.timeQueries = timeQueries
        self.template = template
        self.macroKinds = macroKinds
        self.reevaluatesOpenFindings = reevaluatesOpenFindings
        self.sharedKeys = sharedKeys
        self.sharedByHolders = sharedByHolders
    }

    /// The template with every macro expanded to a filter on `incremental_scope` for `ruleID` (the shared
    /// scope plus the rule's own time keys).
    ///
    /// The keys are selected as `scope_key || ''`, an expression without a column affinity. Selected as the
    /// bare `TEXT` column, SQLite would compare with `TEXT` affinity, which an index on an expression such as
    /// `LOWER(app_account_token)` (no affinity) cannot serve: it read every transaction instead (11.7 s for
    /// IAP-009 in a daily run at 10M). For a macro on a column, the column's own affinity still applies, so
    /// its index serves as before; PostgreSQL reads the same text.
    public func scopedQuery(ruleID: String) -> String {
        let rule = "'" + ruleID.replacingOccurrences(of: "'", with: "''") + "'"
        return
            (try? Self.expand(template) { kind, expression in
                "(\(expression)) IN (SELECT scope_key || '' FROM incremental_scope WHERE kind = '\(kind.rawValue)' AND rule_id IN ('', \(rule)))"
            }) ?? template
    }

    /// The template with every macro expanded to `1 = 1` (the full query).
    public static func fullQuery(_ template: String) throws(MacroError) -> String {
        try expand(template) { _, _ in "1 = 1" }
    }

    /// A malformed `{{scope …}}` macro.
    public struct MacroError: Error, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// The kinds of the macros in `template`, in order.
    public static func macroKinds(in template: String) throws(MacroError) -> [ScopeKind] {
        var kinds: [ScopeKind] = []
        _ = try expand(template) { kind, _ in
            kinds.append(kind)
            return ""
        }
        return kinds
    }

    /// Replaces each `{{scope KIND: expression}}` by `replacement(kind, expression)`.
    static func expand(_ template: String, _ replacement: (ScopeKind, String) -> String) throws(MacroError) -> String {
        var output = ""
        var rest = Substring(template)
        while let open = rest.range(of: "{{") {
            output += rest[rest.startIndex..<open.lowerBound]
            guard let close = rest[open.upperBound...].range(of: "}}") else {
                throw MacroError(message: "a '{{' in the query has no closing '}}'")
            }
            let body = rest[open.upperBound..<close.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
            guard body.hasPrefix("scope "), let colon = body.firstIndex(of: ":") else {
                throw MacroError(message: "unknown macro '{{\(body)}}' (use {{scope KIND: expression}})")
            }
            let kindText = body[body.index(body.startIndex, offsetBy: 6)..<colon]
                .trimmingCharacters(in: .whitespaces)
            guard let kind = ScopeKind(rawValue: kindText) else {
                throw MacroError(
                    message:
                        "unknown scope kind '\(kindText)' (one of: \(ScopeKind.allCases.map(\.rawValue).joined(separator: ", ")))"
                )
            }
            let expression = body[body.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
            guard !expression.isEmpty, !expression.contains("{{") else {
                throw MacroError(message: "{{scope \(kindText): …}} needs an SQL expression")
            }
            output += replacement(kind, expression)
            rest = rest[close.upperBound...]
        }
        if rest.contains("}}") { throw MacroError(message: "a '}}' in the query has no opening '{{'") }
        output += rest
        return output
    }

    /// The scope kind and key of a stored finding, from its entity key; nil when it cannot be told (a NULL
    /// key, a kind column naming no scope kind) — the rule must then be evaluated fully.
    public func scopeKey(of entityKey: [EvidenceField]) -> (ScopeKind, String)? {
        guard let key = entityKey.first(where: { $0.name == keyColumn })?.value else { return nil }
        if let kind { return (kind, key) }
        guard let kindColumn, let text = entityKey.first(where: { $0.name == kindColumn })?.value,
            let kind = ScopeKind(rawValue: text)
        else { return nil }
        return (kind, key)
    }

    /// The scope kind and key of a result row (nil as in ``scopeKey(of:)``).
    public func scopeKey(of row: [String: SQLValue]) -> (ScopeKind, String)? {
        guard let key = row[keyColumn]?.textValue else { return nil }
        if let kind { return (kind, key) }
        guard let kindColumn, let text = row[kindColumn]?.textValue, let kind = ScopeKind(rawValue: text) else {
            return nil
        }
        return (kind, key)
    }
}
