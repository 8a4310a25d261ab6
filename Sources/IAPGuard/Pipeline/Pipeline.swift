import Foundation
import Logging

/// Runs the job end to end: sources → verify → store → rules → reports.
public struct Pipeline {
    public let config: Config
    public let verifier: any AppleRecordVerifier
    public let logger: Logger

    public init(config: Config, verifier: any AppleRecordVerifier, logger: Logger) {
        self.config = config
        self.verifier = verifier
        self.logger = logger
    }

    /// Options of one run.
    public struct Options: Sendable {
        public var since: Int64?
        /// The rules' "now" (grace periods end before it); defaults to the wall clock.
        public var until: Int64?
        /// Findings at or above this level make the run exit with the findings code (`nil`: never).
        public var failOn: Finding.Level?
        public init(since: Int64? = nil, until: Int64? = nil, failOn: Finding.Level? = .high) {
            self.since = since
            self.until = until
            self.failOn = failOn
        }
    }

    /// Ingests every source into the store (opened and migrated here) and records the run.
    public func run(_ options: Options = Options(), shouldStop: @escaping () -> Bool = { false }) throws -> RunSummary {
        let store = try config.storeLocation.open()
        let storePath = store.location
        let lock = try store.acquireRunLock()
        defer { withExtendedLifetime(lock) {} }
        try store.migrate()
        let runID = try store.beginRun(
            RunStart(
                startedAt: Clock.nowMillis(), windowSince: options.since, windowUntil: options.until,
                configHash: config.hash, toolVersion: IAPGuardInfo.version))
        var summary = RunSummary(runID: runID, storePath: storePath)
        summary.startedAt = Clock.nowMillis()
        logger.info("run started", metadata: ["run_id": "\(runID)", "store": "\(storePath)"])

        var reference = config.referenceData
        if let fx = config.fxRatesFile {
            reference.fxRates = try FXRateFile.load(fx, source: fx.lastPathComponent)
        }
        try store.replaceReferenceData(reference)

        for source in config.sources {
            if shouldStop() {
                summary.stopped = true
                break
            }
            var counts = WriteCounts()
            var failure: String?
            let ingestor = SourceIngestor(source: source, verifier: verifier, configHash: config.hash)
            do {
                let skipped = try ingestor.ingest(
                    store: store, runID: runID,
                    sink: { batch in
                        let written = try store.write(batch, runID: runID)
                        counts = counts + written
                    }, shouldStop: shouldStop)
                counts = counts + skipped
            } catch let error as SourceError {
                failure = error.description
            }
            try store.recordSourceCounts(
                runID: runID, sourceName: source.name, sourceKind: source.kind.rawValue, counts: counts)
            if let failure {
                summary.errors.append(failure)
                logger.error("source failed", metadata: ["source": "\(source.name)", "error": "\(failure)"])
            } else {
                logger.info(
                    "source ingested",
                    metadata: [
                        "source": "\(source.name)", "records": "\(counts.records)", "inserted": "\(counts.inserted)",
                        "updated": "\(counts.updated)", "unchanged": "\(counts.unchanged)",
                        "errors": "\(counts.errors)",
                        "files_skipped": "\(counts.filesSkipped)",
                    ])
            }
            summary.sources.append(.init(name: source.name, kind: source.kind.rawValue, counts: counts, error: failure))
        }

        try fillStoreCounts(store, into: &summary)
        if !summary.stopped, let rulesDirectory = config.rulesDirectory {
            try evaluateAndReport(
                store: store, rulesDirectory: rulesDirectory, runID: runID, options: options, summary: &summary)
        }
        let status = summary.stopped ? "stopped" : (summary.errors.isEmpty ? "ok" : "partial")
        try store.finishRun(runID, status: status, finishedAt: Clock.nowMillis(), summaryJSON: summary.jsonText())
        return summary
    }

    /// Runs the rule files against the store, persists the findings and writes the run's report folder.
    func evaluateAndReport(
        store: any SQLBackedStore, rulesDirectory: URL, runID: Int64, options: Options, summary: inout RunSummary
    ) throws {
        let (rules, loadErrors) = RuleSet.load(from: rulesDirectory)
        for error in loadErrors {
            summary.ruleErrors.append("\(error)")
            logger.error("rule file rejected", metadata: ["error": "\(error)"])
        }
        let now = options.until ?? Clock.nowMillis()
        let engine = RuleEngine(
            store: store, referenceCurrency: config.referenceCurrency, paramOverrides: config.ruleParams)
        let result = try engine.evaluate(rules: rules, runID: runID, now: now, since: options.since)
        try engine.persist(result, runID: runID)
        for stats in result.erroredRules {
            summary.ruleErrors.append("\(stats.ruleID): \(stats.error ?? "error")")
        }
        summary.ruleStats = result.stats.sorted { $0.ruleID < $1.ruleID }
        let experimental = Set(rules.filter { !$0.status.failsRun }.map(\.id))
        summary.findingsAtOrAboveFailOn =
            RunExitCode.forCompletedRun(
                findings: result.findings, failOn: options.failOn, experimentalRuleIDs: experimental) == .findings

        var quarantine: [ReportInput.QuarantineCount] = []
        for row in try store.rows(
            "SELECT source_name, reason, COUNT(*) FROM quarantine GROUP BY source_name, reason ORDER BY 1, 2")
        {
            quarantine.append(
                .init(
                    sourceName: row[0].textValue ?? "", reason: row[1].textValue ?? "",
                    count: Int(row[2].integerValue ?? 0)))
        }
        let writer = ReportWriter(reportsDirectory: config.reportsDirectory)
        let input = ReportInput(
            runID: runID, windowSince: options.since, windowUntil: now, startedAt: summary.startedAt,
            finishedAt: Clock.nowMillis(), toolVersion: IAPGuardInfo.version, configHash: config.hash,
            referenceCurrency: config.referenceCurrency,
            sources: summary.sources.map {
                .init(
                    name: $0.name, kind: $0.kind, records: $0.counts.records, inserted: $0.counts.inserted,
                    updated: $0.counts.updated, unchanged: $0.counts.unchanged, errors: $0.counts.errors,
                    watermark: $0.counts.filesSkipped > 0 ? "\($0.counts.filesSkipped) unchanged file(s) skipped" : nil)
            },
            findings: result.findings,
            rules: rules.map {
                .init(
                    id: $0.id, title: $0.title, version: $0.version, description: $0.description, level: $0.level,
                    status: $0.status.rawValue, runbook: $0.runbook, falsePositives: $0.falsePositives)
            },
            ruleCounts: result.stats.map { .init(ruleID: $0.ruleID, evaluated: nil, error: $0.error) },
            quarantine: quarantine, history: (try? writer.readHistory()) ?? [])
        let folder = try writer.write(input)
        summary.reportFolder = folder.path
        logger.info("report written", metadata: ["folder": "\(folder.path)"])
    }

    func fillStoreCounts(_ store: any PurchaseStore, into summary: inout RunSummary) throws {
        for view in ["transactions", "sightings", "orders", "credits", "notifications", "refunds"] {
            summary.storeCounts[view] = try store.scalar("SELECT COUNT(*) FROM \(view)")?.integerValue ?? 0
        }
        for row in try store.rows("SELECT verification, COUNT(*) FROM transactions GROUP BY verification") {
            summary.verification[row[0].textValue ?? "?"] = row[1].integerValue ?? 0
        }
        for row in try store.rows(
            "SELECT verification_reason, COUNT(*) FROM sightings WHERE verification = 'failed' GROUP BY verification_reason"
        ) {
            summary.failedSightings[row[0].textValue ?? "?"] = row[1].integerValue ?? 0
        }
        summary.quarantined = try store.scalar("SELECT COUNT(*) FROM quarantine")?.integerValue ?? 0
    }
}

extension RunSummary {
    /// The summary as compact JSON with sorted keys (stored with the run).
    public func jsonText() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A human summary for stdout.
    public func text() -> String {
        var lines: [String] = []
        lines.append("iapguard run \(runID) — store \(storePath)")
        let header = ["source", "kind", "records", "inserted", "updated", "unchanged", "errors", "skipped files"]
        var table = [header]
        for s in sources {
            let c = s.counts
            table.append([
                s.name, s.kind, "\(c.records)", "\(c.inserted)", "\(c.updated)", "\(c.unchanged)", "\(c.errors)",
                "\(c.filesSkipped)",
            ])
        }
        let widths = (0..<header.count).map { column in table.map { $0[column].count }.max() ?? 0 }
        for row in table {
            lines.append(
                row.enumerated().map { index, cell in
                    index < 2
                        ? cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
                        : String(repeating: " ", count: widths[index] - cell.count) + cell
                }.joined(separator: "  "))
        }
        let order = ["transactions", "sightings", "orders", "credits", "notifications", "refunds"]
        lines.append("store: " + order.map { "\(storeCounts[$0] ?? 0) \($0)" }.joined(separator: ", "))
        lines.append(
            "transactions by verification: "
                + verification.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        if !failedSightings.isEmpty {
            lines.append(
                "failed verification (quarantined sightings): "
                    + failedSightings.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            )
        }
        lines.append("quarantined records: \(quarantined)")
        if !ruleStats.isEmpty {
            lines.append("rules: hits (new/recurring), inconclusive, suppressed, resolved")
            for stats in ruleStats {
                lines.append(
                    "  \(stats.ruleID.padding(toLength: 8, withPad: " ", startingAt: 0)) \(stats.hits) (\(stats.new)/\(stats.recurring)), "
                        + "\(stats.inconclusive), \(stats.suppressed), \(stats.resolved)"
                        + (stats.error.map { "  error: \($0)" } ?? ""))
            }
        }
        if let reportFolder { lines.append("report: \(reportFolder)/report.html") }
        for error in ruleErrors { lines.append("rule error: \(error)") }
        for error in errors { lines.append("error: \(error)") }
        if stopped { lines.append("stopped early on a signal; the next run continues from what was committed") }
        return lines.joined(separator: "\n")
    }
}
