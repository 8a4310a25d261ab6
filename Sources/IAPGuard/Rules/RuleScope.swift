import Foundation

/// One rule's scope in an incremental evaluation: the query to run (macros expanded to scope filters) and
/// the keys in the scope, by kind, to tell which result rows and earlier findings it covers.
public struct RuleScope: Sendable {
    public var incremental: RuleIncremental
    /// The scoped query.
    public var query: String
    /// Keys in the scope (shared scope plus the rule's time keys), by kind.
    public var keys: [ScopeKind: Set<String>]

    public init(incremental: RuleIncremental, query: String, keys: [ScopeKind: Set<String>]) {
        self.incremental = incremental
        self.query = query
        self.keys = keys
    }

    /// Reads `rule`'s scope from `incremental_scope` (nil for a rule without an `incremental:` block).
    public static func load(rule: Rule, from database: any SQLExecutor) throws -> RuleScope? {
        guard rule.incremental != nil else { return nil }
        return try load(rule: rule, shared: loadShared(from: database), from: database)
    }

    /// The shared scope's keys (rule_id `''`), by kind: read once per plan and given to every rule's
    /// ``load(rule:shared:from:)``.
    public static func loadShared(from database: any SQLExecutor) throws -> [ScopeKind: Set<String>] {
        try keys(ruleID: "", adding: [:], from: database)
    }

    /// `rule`'s scope: the shared keys plus the keys stored under the rule's own id (its time keys). The
    /// rules share one copy of the shared sets (copy on write): a set is copied only for a rule that adds
    /// keys of its kind, so a plan of twenty rules holds the shared scope about once, not twenty times.
    public static func load(rule: Rule, shared: [ScopeKind: Set<String>], from database: any SQLExecutor) throws
        -> RuleScope?
    {
        guard let incremental = rule.incremental else { return nil }
        let keys = try keys(ruleID: rule.id, adding: shared, from: database)
        return RuleScope(incremental: incremental, query: incremental.scopedQuery(ruleID: rule.id), keys: keys)
    }

    static func keys(ruleID: String, adding base: [ScopeKind: Set<String>], from database: any SQLExecutor) throws
        -> [ScopeKind: Set<String>]
    {
        var keys = base
        for row in try database.query(
            "SELECT kind, scope_key FROM incremental_scope WHERE rule_id = ?", [.text(ruleID)])
        {
            guard let kindText = row[0].textValue, let kind = ScopeKind(rawValue: kindText),
                let key = row[1].textValue
            else { continue }
            keys[kind, default: []].insert(key)
        }
        return keys
    }

    /// Number of keys in the scope.
    public var count: Int { keys.values.reduce(0) { $0 + $1.count } }

    /// Whether a result row's entity is in the scope; nil when its key cannot be told.
    public func contains(row: [String: SQLValue]) -> Bool? {
        guard let (kind, key) = incremental.scopeKey(of: row) else { return nil }
        return keys[kind]?.contains(Self.normalized(key, kind)) ?? false
    }

    /// Whether an earlier finding's entity is in the scope; nil when its key cannot be told.
    public func contains(entityKey: [EvidenceField]) -> Bool? {
        guard let (kind, key) = incremental.scopeKey(of: entityKey) else { return nil }
        return keys[kind]?.contains(Self.normalized(key, kind)) ?? false
    }

    /// Tokens are kept lower-cased in the scope.
    static func normalized(_ key: String, _ kind: ScopeKind) -> String {
        kind == .appAccountToken ? key.lowercased() : key
    }
}
