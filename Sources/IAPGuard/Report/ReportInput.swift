/// Everything one report is made from: a plain value the pipeline fills in after the rules ran.
///
/// The report never reads the store or the clock: the same `ReportInput` always produces the same bytes.
/// Times are epoch milliseconds UTC; money is milliunits (`990` = 0.99).
public struct ReportInput: Sendable, Hashable, Codable {
    /// One configured source and what this run read from it.
    public struct Source: Sendable, Hashable, Codable {
        public var name: String
        /// `receipts`, `signed-transactions`, `notifications`, `orders`, `credits`, `users` or `app-store-api`.
        public var kind: String
        /// Records read in this run.
        public var records: Int
        public var inserted: Int
        public var updated: Int
        public var unchanged: Int
        /// Records quarantined (could not be parsed or verified).
        public var errors: Int
        /// Where the source stands after this run (a file offset, a last id, a time), as text.
        public var watermark: String?

        public init(
            name: String, kind: String, records: Int, inserted: Int, updated: Int, unchanged: Int, errors: Int,
            watermark: String?
        ) {
            self.name = name
            self.kind = kind
            self.records = records
            self.inserted = inserted
            self.updated = updated
            self.unchanged = unchanged
            self.errors = errors
            self.watermark = watermark
        }
    }

    /// What a rule means, from its YAML file.
    public struct RuleDescription: Sendable, Hashable, Codable {
        /// `IAP-001`.
        public var id: String
        public var title: String
        public var version: String
        public var description: String
        /// The rule's default level.
        public var level: Finding.Level
        /// `stable`, `test` or `experimental`. Experimental rules never fail the run.
        public var status: String
        /// What to do about a hit: text, or an `https://` link (only `http(s)` links become links).
        public var runbook: String?
        /// Known legitimate causes of hits.
        public var falsePositives: [String]

        public init(
            id: String, title: String, version: String, description: String, level: Finding.Level,
            status: String, runbook: String?, falsePositives: [String]
        ) {
            self.id = id
            self.title = title
            self.version = version
            self.description = description
            self.level = level
            self.status = status
            self.runbook = runbook
            self.falsePositives = falsePositives
        }

        /// Whether the rule is experimental (its hits are reported but never fail the run).
        public var isExperimental: Bool { status.lowercased() == "experimental" }
    }

    /// How a rule's evaluation went, as the engine reports it. Hit counts are taken from the findings.
    public struct RuleCount: Sendable, Hashable, Codable {
        public var ruleID: String
        /// Entities the rule examined (transactions, users, ...), if the engine counts them.
        public var evaluated: Int?
        /// Set when the rule failed to run (its findings are then missing from this report).
        public var error: String?

        public init(ruleID: String, evaluated: Int?, error: String? = nil) {
            self.ruleID = ruleID
            self.evaluated = evaluated
            self.error = error
        }
    }

    /// How many records were quarantined for one reason in one source.
    public struct QuarantineCount: Sendable, Hashable, Codable {
        public var sourceName: String
        public var reason: String
        public var count: Int
        /// The first few records' `file:line` (at most ``maxLocations``), so an operator finds the bad lines
        /// without querying the store; `nil` when not known.
        public var locations: [String]?

        /// How many locations a reason shows.
        public static let maxLocations = 3

        public init(sourceName: String, reason: String, count: Int, locations: [String]? = nil) {
            self.sourceName = sourceName
            self.reason = reason
            self.count = count
            self.locations = locations
        }
    }

    /// How many stored notifications of one source failed verification for one reason (they are kept, never
    /// acted on).
    public struct FailedNotificationCount: Sendable, Hashable, Codable {
        public var sourceName: String
        public var reason: String
        public var count: Int

        public init(sourceName: String, reason: String, count: Int) {
            self.sourceName = sourceName
            self.reason = reason
            self.count = count
        }
    }

    /// One FX-normalised price / reference price ratio, for the arbitrage (IAP-008) distribution chart.
    public struct PriceRatio: Sendable, Hashable, Codable {
        public var storefront: String?
        /// Paid price in the reference currency divided by the reference price (1.0 = list price).
        public var ratio: Double

        public init(storefront: String?, ratio: Double) {
            self.storefront = storefront
            self.ratio = ratio
        }
    }

    /// Records a rule could not check and does not list as rows (e.g. IAP-012's credits without any account
    /// marker): one coverage line each, with the sources they came from, most first.
    public struct Coverage: Sendable, Hashable, Codable {
        public var ruleID: String
        /// How many records could not be checked.
        public var unchecked: Int
        /// What they lack, for humans (`no appAccountToken / applicationUsername`).
        public var reason: String
        /// (source, records), most first, at most five.
        public var topSources: [SourceCount]

        public struct SourceCount: Sendable, Hashable, Codable {
            public var source: String
            public var count: Int
            public init(source: String, count: Int) {
                self.source = source
                self.count = count
            }
        }

        public init(ruleID: String, unchecked: Int, reason: String, topSources: [SourceCount]) {
            self.ruleID = ruleID
            self.unchecked = unchecked
            self.reason = reason
            self.topSources = topSources
        }

        /// `N credits could not be checked: no appAccountToken / applicationUsername (top sources: …)`.
        public var line: String {
            let sources = topSources.map { "\($0.source) \($0.count)" }.joined(separator: ", ")
            return "\(ruleID): \(unchecked) credit\(unchecked == 1 ? "" : "s") could not be checked: \(reason)"
                + (sources.isEmpty ? "" : " (top sources: \(sources))")
        }
    }

    public var runID: Int64
    /// The window the rules looked at (epoch ms), if bounded.
    public var windowSince: Int64?
    public var windowUntil: Int64?
    public var startedAt: Int64
    public var finishedAt: Int64
    public var toolVersion: String
    /// Hash of the effective configuration (rules included), as recorded in `runs`.
    public var configHash: String
    /// ISO 4217 code of `Finding.amountRef` and the money-at-risk totals.
    public var referenceCurrency: String
    public var sources: [Source]
    public var findings: [Finding]
    public var rules: [RuleDescription]
    public var ruleCounts: [RuleCount]
    public var quarantine: [QuarantineCount]
    /// Notifications the store holds that failed verification, by source and reason; `nil` when none (or not
    /// counted), so a report without them is unchanged.
    public var failedNotifications: [FailedNotificationCount]?
    /// Earlier runs (any order); entries for this run id or later are ignored.
    public var history: [RunHistoryEntry]
    /// Price ratios of the purchases IAP-008 examined. When `nil`, the ratios are read from IAP-008 findings'
    /// `observed` values that are plain numbers.
    public var priceRatios: [PriceRatio]?
    /// When true, each source's `records` is what the store holds from it and `errors` its quarantined
    /// records (read counts are then 0 and not shown): the pipeline's choice, so that a run and its re-run
    /// of the same window give identical bytes.
    public var sourcesAsStored: Bool?
    /// What rules could not check (coverage lines); `nil` or empty when everything was checkable.
    public var coverage: [Coverage]?
    /// The case queue after the case stage (see ``IncidentCase``); empty when cases were not built.
    public var cases: [IncidentCase]
    /// Source errors of the run (the run is `partial`): shown at the top of the report. `nil` when none.
    public var sourceErrors: [String]?
    /// Warnings about the run's deliveries (an empty delivery, FX rows dropped). `nil` when none.
    public var sourceWarnings: [String]?

    /// Sets ``sourceErrors`` and ``sourceWarnings`` (`nil` when empty, so a clean run's report is unchanged).
    public mutating func setSourceProblems(errors: [String], warnings: [String]) {
        sourceErrors = errors.isEmpty ? nil : errors
        sourceWarnings = warnings.isEmpty ? nil : warnings
    }

    public init(
        runID: Int64, windowSince: Int64?, windowUntil: Int64?, startedAt: Int64, finishedAt: Int64,
        toolVersion: String, configHash: String, referenceCurrency: String, sources: [Source],
        findings: [Finding], rules: [RuleDescription], ruleCounts: [RuleCount], quarantine: [QuarantineCount],
        history: [RunHistoryEntry], priceRatios: [PriceRatio]? = nil, coverage: [Coverage]? = nil,
        cases: [IncidentCase] = [], failedNotifications: [FailedNotificationCount]? = nil
    ) {
        self.coverage = coverage
        self.failedNotifications = failedNotifications
        self.runID = runID
        self.windowSince = windowSince
        self.windowUntil = windowUntil
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.toolVersion = toolVersion
        self.configHash = configHash
        self.referenceCurrency = referenceCurrency
        self.sources = sources
        self.findings = findings
        self.rules = rules
        self.ruleCounts = ruleCounts
        self.quarantine = quarantine
        self.history = history
        self.priceRatios = priceRatios
        self.cases = cases
    }
}
