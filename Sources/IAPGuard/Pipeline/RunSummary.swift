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

    public init(runID: Int64, storePath: String) {
        self.runID = runID
        self.storePath = storePath
    }
}
