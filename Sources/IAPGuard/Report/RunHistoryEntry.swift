/// One run as remembered in `reports/history.jsonl`: the numbers the trend charts need.
///
/// Counts are of active hits (outcome `hit`, status `new` or `recurring`); suppressed, resolved and
/// inconclusive findings are not counted. Coding keys are snake_case (the file format, documented in
/// `docs/reports.md`).
public struct RunHistoryEntry: Sendable, Hashable, Codable {
    public var runID: Int64
    /// Epoch ms.
    public var finishedAt: Int64
    /// Active hits by level (`Finding.Level.rawValue` → count); missing levels are 0.
    public var countsByLevel: [String: Int]
    /// Active hits by rule id.
    public var hitsByRule: [String: Int]
    /// Money at risk, milliunits of `referenceCurrency`.
    public var moneyAtRisk: Int64
    public var referenceCurrency: String
    /// Cases waiting for an analyst (`open` or `investigating`) by level; absent in runs without cases.
    public var openCasesByLevel: [String: Int]?

    public init(
        runID: Int64, finishedAt: Int64, countsByLevel: [String: Int], hitsByRule: [String: Int],
        moneyAtRisk: Int64, referenceCurrency: String
    ) {
        self.runID = runID
        self.finishedAt = finishedAt
        self.countsByLevel = countsByLevel
        self.hitsByRule = hitsByRule
        self.moneyAtRisk = moneyAtRisk
        self.referenceCurrency = referenceCurrency
    }

    enum CodingKeys: String, CodingKey {
        case runID = "run_id"
        case finishedAt = "finished_at"
        case countsByLevel = "counts_by_level"
        case hitsByRule = "hits_by_rule"
        case moneyAtRisk = "money_at_risk_milli"
        case referenceCurrency = "reference_currency"
        case openCasesByLevel = "open_cases_by_level"
    }

    /// Open cases over all levels (nil in runs without cases).
    public var openCases: Int? { openCasesByLevel.map { $0.values.reduce(0, +) } }

    /// Active hits of `level`.
    public func count(_ level: Finding.Level) -> Int { countsByLevel[level.rawValue] ?? 0 }

    /// All active hits.
    public var total: Int { countsByLevel.values.reduce(0, +) }
}
