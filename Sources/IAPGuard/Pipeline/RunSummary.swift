/// What one run did, printed as the final summary and stored with the run.
public struct RunSummary: Sendable, Codable {
    public struct SourceResult: Sendable, Codable {
        public var name: String
        public var kind: String
        public var counts: WriteCounts
        public var error: String?
        /// Wall seconds the source's ingest took, and CPU seconds the process used meanwhile (every thread:
        /// the next source's reading and verifying runs ahead beside it). Never in reports.
        public var seconds: Double?
        public var cpuSeconds: Double?
    }

    public var runID: Int64
    public var storePath: String
    /// The run's window (`since == nil`: from the beginning).
    public var window: RunWindow?
    /// The report id of the window (`yyyyMMddHHmmss` of `until`), also the report folder's name.
    public var reportID: Int64?
    /// A dry run: everything ran against a copy of the store; nothing was written.
    public var dryRun = false
    public var sources: [SourceResult] = []
    /// Rows in each view after the run (`transactions`, `sightings`, `orders`, ...).
    public var storeCounts: [String: Int64] = [:]
    /// Canonical transactions by verification state.
    public var verification: [String: Int64] = [:]
    /// Sightings that failed verification, by reason.
    public var failedSightings: [String: Int64] = [:]
    /// Notifications read in this run that failed verification (kept, never acted on), by reason.
    public var failedNotifications: [String: Int64] = [:]
    public var quarantined: Int64 = 0
    /// Problems that stopped part of the run (a missing source file, a broken export, ...).
    public var errors: [String] = []
    /// What an operator should look at although the run is complete (an empty delivery, FX rows dropped).
    public var warnings: [String] = []
    public var stopped = false
    /// Wall-clock start and end (epoch ms); kept in the store, the log and the metrics, never in reports.
    public var startedAt: Int64 = 0
    public var finishedAt: Int64 = 0
    /// Seconds spent per stage (`reference`, `ingest`, `rules`, `report`), in the order they ran.
    public var stageSeconds: [String: Double] = [:]
    /// Earlier runs whose findings were rewound because this run re-evaluated their window.
    public var rewoundRunIDs: [Int64] = []
    /// Set when this run resumed an interrupted run (same run id): that run's former status (`running` when
    /// it was killed, `stopped`, `failed`).
    public var resumedFrom: String?
    /// Per-rule counts of the rule phase.
    public var ruleStats: [RuleRunResult.RuleStats] = []
    /// Rule id → how it was evaluated: `full`, `incremental` or `full (reason)`.
    public var ruleModes: [String: String] = [:]
    /// Keys in the shared incremental scope, by kind (empty when every rule ran fully).
    public var scopeKeys: [String: Int] = [:]
    /// Active hits (outcome hit, new or recurring, not suppressed) by rule id and level.
    public var activeHits: [String: [String: Int]] = [:]
    /// Rule files that did not load and rules whose query failed (the other rules still ran).
    public var ruleErrors: [String] = []
    /// Whether findings at or above `--fail-on` were found (exit code 2).
    public var findingsAtOrAboveFailOn = false
    /// The report folder written by this run.
    public var reportFolder: String?
    /// What each App Store Server API source pulled: calls, HTTP attempts (retries included), pages, what it
    /// left for the next run.
    public var appStoreAPI: [ApplePullSummary] = []
    /// Cases after the case stage: by status (`open`, `investigating`, …) and what the run did (`opened`,
    /// `reopened`, `resolved_by_job`, `merged`).
    public var caseCounts: [String: Int] = [:]

    public init(runID: Int64, storePath: String) {
        self.runID = runID
        self.storePath = storePath
    }

    /// The status recorded for the run: `stopped`, `partial` (a source failed) or `ok`.
    public var status: String { stopped ? "stopped" : (errors.isEmpty ? "ok" : "partial") }

    /// Active hits over all rules and levels.
    public var activeHitCount: Int { activeHits.values.reduce(0) { $0 + $1.values.reduce(0, +) } }
}
