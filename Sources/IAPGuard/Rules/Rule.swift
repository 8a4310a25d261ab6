import Foundation

/// One fraud rule, loaded from a YAML file in the rules folder (the format is documented in `docs/rules.md`).
///
/// A rule is data: a SQL query over the store's documented views, its parameters with defaults, how its
/// result rows become findings (entity key, evidence), the exceptions that suppress known-good hits, and
/// inline tests.
public struct Rule: Sendable, Hashable {
    /// Lifecycle of a rule.
    public enum Status: String, Sendable, Hashable, CaseIterable, Codable {
        /// Reports hits, but never fails the run (new or being tuned).
        case experimental
        /// Reports hits; its hits fail the run.
        case stable
        /// Still runs and reports, never fails the run; kept for history, to be removed.
        case deprecated

        /// Whether a hit of a rule with this status fails the run.
        public var failsRun: Bool { self == .stable }
    }

    /// A declared parameter: its default value bound as `:name`, and what it means.
    public struct Param: Sendable, Hashable {
        public var name: String
        public var defaultValue: SQLValue
        public var description: String?
        public init(name: String, defaultValue: SQLValue, description: String? = nil) {
            self.name = name
            self.defaultValue = defaultValue
            self.description = description
        }
    }

    /// A further query fetching evidence rows for one hit (the transaction, its orders and credits, ...).
    ///
    /// Its named parameters are bound from the hit row's columns of the same name, then from the rule's
    /// parameters (`:now`, `:reference_currency` included).
    public struct EvidenceQuery: Sendable, Hashable {
        /// The evidence kind shown in reports: `transaction`, `order`, `credit`, `refund`, ...
        public var kind: String
        public var sql: String
        /// At most this many rows are kept.
        public var limit: Int
        public var line: Int
        public init(kind: String, sql: String, limit: Int, line: Int) {
            self.kind = kind
            self.sql = sql
            self.limit = limit
            self.line = line
        }
    }

    /// Reserved parameters the engine always binds.
    public static let reservedParams: Set<String> = ["now", "since", "reference_currency"]
    /// Parameters bound only in an `incremental:` block's time queries: the previous evaluation's now.
    public static let timeQueryParams: Set<String> = ["previous_now"]
    /// Hard cap on evidence rows per evidence query.
    public static let maxEvidenceRows = 20

    public var id: String
    public var title: String
    public var description: String
    public var version: String
    public var status: Status
    public var level: Finding.Level
    public var tags: [String]
    public var params: [Param]
    public var query: String
    /// Result columns forming the entity key; `finding_id` = hash(rule id + these values).
    public var entityKey: [String]
    /// Result columns that explain a hit, shown as the finding's first evidence row.
    public var evidenceColumns: [String]
    public var evidenceQueries: [EvidenceQuery]
    public var falsePositives: [String]
    public var runbook: String
    public var exceptions: [RuleException]
    public var tests: [RuleTest]
    /// The rule's opt-in to incremental evaluation (`incremental:`); nil: always evaluated fully. ``query``
    /// is always the full query (its `{{scope …}}` macros expanded to `1 = 1`).
    public var incremental: RuleIncremental?
    /// The file the rule was loaded from.
    public var file: String
    /// Line numbers of the top-level fields (`query`, `params`, ...), for messages.
    public var lines: [String: Int]

    public init(
        id: String, title: String, description: String, version: String, status: Status, level: Finding.Level,
        tags: [String] = [], params: [Param] = [], query: String, entityKey: [String], evidenceColumns: [String] = [],
        evidenceQueries: [EvidenceQuery] = [], falsePositives: [String] = [], runbook: String = "",
        exceptions: [RuleException] = [], tests: [RuleTest] = [], file: String = "<memory>", lines: [String: Int] = [:]
    ) {
        self.id = id
        self.title = title
        self.description = description
        self.version = version
        self.status = status
        self.level = level
        self.tags = tags
        self.params = params
        self.query = query
        self.entityKey = entityKey
        self.evidenceColumns = evidenceColumns
        self.evidenceQueries = evidenceQueries
        self.falsePositives = falsePositives
        self.runbook = runbook
        self.exceptions = exceptions
        self.tests = tests
        self.file = file
        self.lines = lines
    }

    /// The line of a top-level field, or 1.
    public func line(of field: String) -> Int { lines[field] ?? 1 }

    /// The parameter values for a run: defaults, then `overrides`, then the reserved parameters.
    public func boundParameters(
        overrides: [String: SQLValue], now: Int64, since: Int64, referenceCurrency: String
    ) -> [String: SQLValue] {
        var values: [String: SQLValue] = [:]
        for param in params { values[param.name] = param.defaultValue }
        for (name, value) in overrides where !Self.reservedParams.contains(name) { values[name] = value }
        values["now"] = .integer(now)
        values["since"] = .integer(since)
        values["reference_currency"] = .text(referenceCurrency)
        return values
    }
}
