/// What one evaluation of a rule set produced: the findings (including `resolved` ones) and per-rule
/// statistics.
public struct RuleRunResult: Sendable {
    /// Counts and timing for one rule in one run.
    public struct RuleStats: Sendable, Hashable, Codable {
        public var ruleID: String
        public var ruleVersion: String
        public var ruleStatus: Rule.Status
        /// Unsuppressed hits.
        public var hits = 0
        public var inconclusive = 0
        public var suppressed = 0
        public var resolved = 0
        /// Of the ``hits``, those first seen in this run.
        public var new = 0
        /// Of the ``hits``, those an earlier run already reported.
        public var recurring = 0
        /// The query error, if the rule could not run (its earlier findings are then not resolved).
        public var error: String?
        /// Wall time of the rule's query and evidence queries, milliseconds.
        public var queryMillis: Double = 0
        /// Wall time of turning the result rows into findings after the query, milliseconds: the evidence
        /// queries, exceptions and earlier findings (nil in results stored before it was measured).
        public var findingMillis: Double?
        /// How the rule was evaluated: `full`, `incremental`, or `full (reason)` when an incremental
        /// evaluation fell back (nil in results stored before incremental evaluation existed).
        public var mode: String?
        /// Findings of this evaluation priced at `:now` (no purchase date, no amount_ref): the next
        /// evaluation of the rule must be full.
        public var pricedAtNow = 0
        /// Findings carried over unchanged from earlier runs (incremental mode).
        public var carried = 0

        public init(ruleID: String, ruleVersion: String, ruleStatus: Rule.Status) {
            self.ruleID = ruleID
            self.ruleVersion = ruleVersion
            self.ruleStatus = ruleStatus
        }
    }

    public var findings: [Finding]
    public var stats: [RuleStats]
    /// Non-fatal problems (an expired exception that matched, a bad `level` column, an evidence query error).
    public var warnings: [String]
    /// Ids of the ``findings`` carried over unchanged from earlier runs (incremental mode): their stored
    /// rows only move to this run (status `recurring`, `suppressed` stays), so they are persisted set-based.
    public var carriedFindingIDs: [String] = []

    public init(findings: [Finding] = [], stats: [RuleStats] = [], warnings: [String] = []) {
        self.findings = findings
        self.stats = stats
        self.warnings = warnings
    }

    /// Rules whose query failed.
    public var erroredRules: [RuleStats] { stats.filter { $0.error != nil } }
}
