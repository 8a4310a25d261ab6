/// What one run did, printed as the final summary and stored with the run.
public struct RunSummary: Sendable, Codable {
    public struct SourceResult: Sendable, Codable {
        public var name: String
        public var kind: String
        public var counts: WriteCounts
        public var error: String?
    }

    public var runID: Int64
    public var storePath: String
    public var sources: [SourceResult] = []
    /// Rows in each view after the run (`transactions`, `sightings`, `orders`, ...).
    public var storeCounts: [String: Int64] = [:]
    /// Canonical transactions by verification state.
    public var verification: [String: Int64] = [:]
    /// Sightings that failed verification, by reason.
    public var failedSightings: [String: Int64] = [:]
    public var quarantined: Int64 = 0
    /// Problems that stopped part of the run (a missing source file, ...).
    public var errors: [String] = []
    public var stopped = false
    public var startedAt: Int64 = 0
    /// Per-rule counts of the rule phase.
    public var ruleStats: [RuleRunResult.RuleStats] = []
    /// Rule files that did not load and rules whose query failed (the other rules still ran).
    public var ruleErrors: [String] = []
    /// Whether findings at or above `--fail-on` were found (exit code 2).
    public var findingsAtOrAboveFailOn = false
    /// The report folder written by this run.
    public var reportFolder: String?

    public init(runID: Int64, storePath: String) {
        self.runID = runID
        self.storePath = storePath
    }
}
