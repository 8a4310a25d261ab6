/// The full answer of a support lookup: what was asked and matched, the verdicts in plain language, the
/// timeline, the findings, user profiles, consumption drafts and the evidence rows. Encoded by
/// ``LookupJSON`` as stable JSON (`schema_version` 1, documented in `docs/support.md`).
public struct LookupResult: Sendable, Hashable, Codable {
    /// The JSON schema version. Bumped only when a field is removed or changes meaning.
    public static let currentSchemaVersion = 1

    /// What was asked and what matched.
    public struct Query: Sendable, Hashable, Codable {
        public var id: String
        /// The kind pinned with `--kind`, or `nil` when every kind was tried.
        public var kind: IDKind?
        public var kindsTried: [IDKind]
        public var matches: [Match]
    }

    /// One kind the id matched, with what it matched.
    public struct Match: Sendable, Hashable, Codable {
        public var kind: IDKind
        /// e.g. `1 transaction`, `3 orders, 4 credits`.
        public var matched: String
    }

    /// The latest run recorded in the store.
    public struct RunInfo: Sendable, Hashable, Codable {
        public var runID: Int64
        public var startedAt: Int64
        public var finishedAt: Int64?
        public var status: String
        /// The rules' "now" of that run, when it was set (`--until`).
        public var windowUntil: Int64?
    }

    public var schemaVersion: Int = Self.currentSchemaVersion
    public var query: Query
    public var found: Bool
    /// The time grace periods and standing credits were judged at, epoch ms (the last run's `--until`,
    /// else the wall clock, unless `--at` was given).
    public var asOf: Int64
    public var referenceCurrency: String
    public var lastRun: RunInfo?
    /// The answer in plain language, most important first.
    public var answer: [String] = []
    public var verdicts: [ClaimVerdict] = []
    public var timeline: [TimelineEvent] = []
    public var findings: [LookupFinding] = []
    public var users: [LookupUserProfile] = []
    public var consumptionDrafts: [ConsumptionDraft] = []
    public var evidence = LookupEvidence()
    /// Caveats: truncation, Apple order lookup unavailable, data possibly not pulled yet.
    public var notes: [String] = []
    /// Whether the scope was cut at ``LookupService/maxTransactions``.
    public var truncated = false
}
