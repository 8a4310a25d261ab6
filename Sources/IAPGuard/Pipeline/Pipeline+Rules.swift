import Foundation
import Logging

extension Pipeline {
    /// The rule stage, the report and the run's final status, as one store transaction: the findings (and
    /// the rewind of earlier runs of this window) commit only after the report folder is in place, and the
    /// run is `ok` only if all of it happened.
    ///
    /// `rules` are the config's rules folder as loaded (``RuleSetPrefetch``); `nil` when the config has none.
    ///
    /// A signal (`shouldStop`) before the stage's transaction, or once its rules have run, ends it with
    /// ``Pipeline/StopRequested`` and nothing of it committed.
    func evaluateReportAndFinish(
        store: any SQLBackedStore, window: RunWindow, options: Options, writesReports: Bool,
        rules ruleFiles: RuleSetPrefetch.Loaded?, summary: inout RunSummary, shouldStop: () -> Bool = { false }
    ) throws {
        guard let (loaded, loadErrors) = ruleFiles else {
            try fillStoreCounts(store, into: &summary)
            try finish(store, &summary)
            return
        }
        let (rules, viewErrors) = RuleSet.readingViewsOnly(loaded)
        for error in loadErrors + viewErrors {
            summary.ruleErrors.append("\(error)")
            logger.error("rule file rejected", metadata: ["error": "\(error)"])
        }
        // The store-wide counts, and the report's coverage line unless the kept gaps are re-told for the
        // scope, read whole tables: they run on readers beside the rule stage (``RuleQueryPrefetch``).
        let wantsCoverage = writesReports && rules.contains { $0.id == "IAP-012" }
        var countQueries: RuleQueryPrefetch?
        var coverageQuery: RuleQueryPrefetch?
        var coverageRefreshed = false
        let rewind = FindingRewind(database: store.connection)
        let runID = summary.runID
        let engine = RuleEngine(
            store: store, referenceCurrency: config.referenceCurrency, paramOverrides: config.ruleParams)
        let planner = IncrementalPlanner(
            store: store, referenceCurrency: config.referenceCurrency, paramOverrides: config.ruleParams)
        // Rules without an `incremental:` block always run fully, and so do those whose shared keys the day's
        // changes already spread too wide: their queries and the store-wide counts start on one reader while
        // the scope is built on this connection.
        func startEarlyQueries(forceFull: String?) throws -> [String: String] {
            let early = try planner.fullBeforeScope(rules: rules, now: window.until, forceFull: forceFull)
            countQueries = try engine.prefetchQueries(
                of: rules.filter { $0.incremental == nil || early[$0.id] != nil }, now: window.until,
                since: window.since, readers: 1, extraJobs: Self.storeCountJobs)
            return early
        }
        // Where readers can run queries, the scope is committed in a transaction of its own before the
        // stage's, so that the scoped queries run on the readers too instead of one by one on this
        // connection. It is derived data: every plan deletes and rebuilds it, so a run killed after this
        // commit leaves nothing the next run reads. A window to re-evaluate runs every rule fully: no scope.
        var prebuilt: (plan: IncrementalPlanner.Plan, seconds: Double)?
        if !options.fullRebuild, engine.canPrefetch,
            try rewind.runsToRewind(endingAtOrAfter: window.until, currentRunID: runID).isEmpty
        {
            var plan = IncrementalPlanner.Plan()
            let seconds = try Self.measure {
                let early = try startEarlyQueries(forceFull: nil)
                plan = try store.connection.transaction {
                    try planner.plan(
                        rules: rules, runID: runID, now: window.until, forceFull: nil, decided: early,
                        remembersFX: false)
                }
            }
            prebuilt = (plan, seconds)
            CrashPoint.shared.reached("scope")
        }
        // The ingest's last pages were copied into the file while the scope was built; the readers started
        // from here read the file, not the WAL. What is left of that copy counts as ingest.
        summary.stageSeconds["ingest", default: 0] += try Self.measure { try store.endIngestCheckpoints() }
        if shouldStop() { throw StopRequested() }
        try store.connection.transaction {
            summary.rewoundRunIDs = try rewind.rewind(runsEndingAtOrAfter: window.until, currentRunID: runID)
            if !summary.rewoundRunIDs.isEmpty {
                logger.info(
                    "re-evaluating a window already evaluated; earlier findings of it are replaced",
                    metadata: ["rewound_run_ids": "\(summary.rewoundRunIDs.map(String.init).joined(separator: ","))"])
            }
            var result = RuleRunResult()
            let scopeCommitted = prebuilt != nil && summary.rewoundRunIDs.isEmpty
            let rulesSeconds = try Self.measure {
                var plan: IncrementalPlanner.Plan
                if scopeCommitted, let prebuilt {
                    plan = prebuilt.plan
                    try planner.rememberFXRates()
                } else {
                    let forceFull =
                        options.fullRebuild
                        ? "--full-rebuild" : (summary.rewoundRunIDs.isEmpty ? nil : "window re-evaluated")
                    let early = try startEarlyQueries(forceFull: forceFull)
                    plan = try planner.plan(
                        rules: rules, runID: runID, now: window.until, forceFull: forceFull, decided: early)
                }
                engine.scopes = plan.scopes
                record(plan, into: &summary)
                if wantsCoverage, plan.sharedScopeSince != nil {
                    // The rules' queries start on the readers first: the coverage refresh writes on this
                    // connection, inside this transaction, and no rule reads what it writes.
                    _ = try engine.prefetchQueries(
                        of: rules, now: window.until, since: window.since, readers: nil, extraJobs: [],
                        scopeCommitted: scopeCommitted)
                    if try planner.widen(
                        &plan, id: CoverageGaps.scopeID, kinds: CoverageGaps.sharedKeys, holders: true)
                    {
                        coverageRefreshed = try CoverageGaps(connection: store.connection).refreshScoped(
                            scopeSince: plan.sharedScopeSince, runID: runID)
                    }
                }
                // The full-mode queries run side by side on read-only connections while findings are made
                // (those not started above).
                let telling =
                    wantsCoverage && !coverageRefreshed
                    ? [
                        RuleQueryPrefetch.Job(
                            key: Self.coverageKey, sql: CoverageGaps.rowsSQL(scoped: false), parameters: [:])
                    ]
                    : []
                let fullQueries = try engine.prefetchQueries(
                    of: rules, now: window.until, since: window.since, readers: nil, extraJobs: telling,
                    scopeCommitted: scopeCommitted)
                if !telling.isEmpty { coverageQuery = fullQueries }
                let evaluateSeconds = try Self.measure {
                    result = try evaluate(rules, engine: engine, runID: runID, window: window)
                }
                try planner.record(result, rules: rules, runID: runID, now: window.until)
                let carried = Set(result.carriedFindingIDs)
                let undoSeconds = try Self.measure {
                    try rewind.remember(
                        findingIDs: result.findings.map(\.findingID).filter { !carried.contains($0) }, runID: runID)
                    try store.stageCarriedFindings(result.carriedFindingIDs)
                    try rewind.rememberCarried(runID: runID)
                }
                let persistSeconds = try Self.measure { try engine.persist(result, runID: runID) }
                logger.debug(
                    "rule stage timing",
                    metadata: [
                        "evaluate_seconds": "\(String(format: "%.3f", evaluateSeconds))",
                        "undo_seconds": "\(String(format: "%.3f", undoSeconds))",
                        "persist_seconds": "\(String(format: "%.3f", persistSeconds))",
                        "findings": "\(result.findings.count)", "carried": "\(carried.count)",
                    ])
                try rewind.prune(horizon: config.rewindHorizonDays * 86_400_000, latestUntil: window.until)
            }
            summary.stageSeconds["rules"] = rulesSeconds + (prebuilt?.seconds ?? 0)
            for stats in result.stats { summary.ruleModes[stats.ruleID] = stats.mode ?? "full" }
            record(result, rules: rules, failOn: options.failOn, into: &summary)
            CrashPoint.shared.reached("rules")
            if shouldStop() { throw StopRequested() }
            var cases: [IncidentCase] = []
            summary.stageSeconds["cases"] = try Self.measure {
                cases = try buildCases(
                    store: store, findings: result.findings, rules: rules, options: options, summary: &summary)
            }
            if writesReports {
                FreedMemory.release()
                var folder: URL?
                let reportSeconds = try Self.measure {
                    // The report takes the findings over: they are held once, not once here and once there.
                    let findings = result.findings
                    result.findings = []
                    folder = try writeReport(
                        store: store, rules: rules, findings: consume findings, stats: result.stats, window: window,
                        cases: cases, sourceErrors: summary.errors, sourceWarnings: summary.warnings,
                        countQueries: countQueries,
                        coverage: wantsCoverage
                            ? .init(runID: runID, refreshed: coverageRefreshed, query: coverageQuery) : nil)
                }
                summary.stageSeconds["report"] = reportSeconds
                summary.reportFolder = folder?.path
                logger.info("report written", metadata: ["folder": "\(folder?.path ?? "")"])
                CrashPoint.shared.reached("report")
            }
            try fillStoreCounts(store, into: &summary, prefetched: countQueries)
            try finish(store, &summary)
        }
    }

    /// The case stage (``CaseStage``) on the stored findings; with `failOnOpenCases`, decides the findings
    /// exit code from open cases of non-experimental rules at or above `failOn` instead of from hits.
    func buildCases(
        store: any SQLBackedStore, findings: [Finding], rules: [Rule], options: Options, summary: inout RunSummary
    ) throws -> [IncidentCase] {
        var losing: [String: String] = [:]
        for finding in findings where finding.status != .resolved {
            if let user = CaseStage.losingUserID(userID: finding.userID, evidence: finding.evidence) {
                losing[finding.findingID] = user
            }
        }
        let outcome = try CaseStage(connection: store.connection).run(
            runID: summary.runID, at: Clock.nowMillis(), losingUsers: losing)
        var counts: [String: Int] = [
            "opened": outcome.opened, "reopened": outcome.reopened, "resolved_by_job": outcome.resolved,
            "merged": outcome.merged,
        ]
        for incident in outcome.cases where !incident.findingIDs.isEmpty {
            counts[incident.status.rawValue, default: 0] += 1
        }
        summary.caseCounts = counts
        logger.info(
            "cases built",
            metadata: [
                "cases": "\(outcome.cases.count)", "opened": "\(outcome.opened)", "reopened": "\(outcome.reopened)",
                "resolved": "\(outcome.resolved)", "merged": "\(outcome.merged)",
                "largest_case_findings": "\(outcome.largestCase)",
            ])
        if options.failOnOpenCases {
            let experimental = Set(rules.filter { !$0.status.failsRun }.map(\.id))
            summary.findingsAtOrAboveFailOn = outcome.cases.contains { incident in
                guard let failOn = options.failOn, incident.status.isOpen, incident.level >= failOn else {
                    return false
                }
                return incident.rules.contains { !experimental.contains($0) }
            }
        }
        return outcome.cases
    }

    /// Evaluates the rules one at a time (for progress and checkpoints); a failing rule does not stop the others.
    func evaluate(_ rules: [Rule], engine: RuleEngine, runID: Int64, window: RunWindow) throws -> RuleRunResult {
        var result = RuleRunResult()
        progress.begin("rules", unit: "rules", total: rules.count)
        defer { progress.end() }
        // Each rule's findings are joined once at the end into an array of the exact size: growing one array
        // rule by rule doubled its capacity and copied it, a transient of several times the findings at scale.
        var parts: [[Finding]] = []
        for rule in rules {
            var one = try engine.evaluate(rules: [rule], runID: runID, now: window.until, since: window.since)
            parts.append(one.findings)
            one.findings = []
            result.stats += one.stats
            result.warnings += one.warnings
            result.carriedFindingIDs += one.carriedFindingIDs
            progress.advance()
            CrashPoint.shared.reached("rules")
        }
        result.findings.reserveCapacity(parts.reduce(0) { $0 + $1.count })
        for index in parts.indices {
            result.findings.append(contentsOf: parts[index])
            parts[index] = []
        }
        for warning in result.warnings { logger.warning("rule warning", metadata: ["warning": "\(warning)"]) }
        return result
    }

    /// Puts the incremental plan into the summary and the log.
    func record(_ plan: IncrementalPlanner.Plan, into summary: inout RunSummary) {
        summary.stageSeconds["scope"] = plan.seconds
        summary.scopeKeys = Dictionary(uniqueKeysWithValues: plan.sharedScope.map { ($0.key.rawValue, $0.value) })
        let incremental: Int = plan.modes.values.filter(\.isIncremental).count
        let full: Int = plan.modes.count - incremental
        let keys: Int = plan.sharedScope.values.reduce(0, +)
        let seconds: String = String(format: "%.3f", plan.seconds)
        var metadata: Logger.Metadata = [:]
        metadata["incremental_rules"] = .string(String(incremental))
        metadata["full_rules"] = .string(String(full))
        metadata["scope_keys"] = .string(String(keys))
        metadata["scope_seconds"] = .string(seconds)
        logger.info("rule evaluation planned", metadata: metadata)
        logger.debug(
            "scope timing",
            metadata: [
                "shared_scope_seconds": "\(String(format: "%.3f", plan.sharedScopeSeconds))",
                "time_query_seconds": "\(String(format: "%.3f", plan.timeQuerySeconds))",
                "scope_load_seconds": "\(String(format: "%.3f", plan.scopeLoadSeconds))",
                "time_queries_run": "\(plan.timeQueriesRun)", "time_queries_cached": "\(plan.timeQueriesCached)",
            ])
        for (ruleID, mode) in plan.modes.sorted(by: { $0.key < $1.key }) {
            logger.debug("rule mode", metadata: ["rule": "\(ruleID)", "mode": "\(mode)"])
        }
    }

    /// Puts the rule stage's counts into the summary.
    func record(_ result: RuleRunResult, rules: [Rule], failOn: Finding.Level?, into summary: inout RunSummary) {
        for stats in result.erroredRules {
            summary.ruleErrors.append("\(stats.ruleID): \(stats.error ?? "error")")
            logger.error("rule failed", metadata: ["rule": "\(stats.ruleID)", "error": "\(stats.error ?? "error")"])
        }
        summary.ruleStats = result.stats.sorted { $0.ruleID < $1.ruleID }
        for stats in summary.ruleStats {
            logger.debug(
                "rule timing",
                metadata: [
                    "rule": "\(stats.ruleID)", "query_seconds": "\(String(format: "%.3f", stats.queryMillis / 1000))",
                    "finding_seconds": "\(String(format: "%.3f", (stats.findingMillis ?? 0) / 1000))",
                    "findings": "\(stats.hits + stats.inconclusive + stats.suppressed)",
                ])
        }
        for finding in result.findings
        where finding.outcome == .hit && (finding.status == .new || finding.status == .recurring)
            && finding.suppression == nil
        {
            summary.activeHits[finding.ruleID, default: [:]][finding.level.rawValue, default: 0] += 1
        }
        let experimental = Set(rules.filter { !$0.status.failsRun }.map(\.id))
        summary.findingsAtOrAboveFailOn =
            RunExitCode.forCompletedRun(
                findings: result.findings, failOn: failOn, experimentalRuleIDs: experimental) == .findings
    }

    /// Writes the window's report folder. Everything in it comes from the store's data and the window: the
    /// report id is the window's (``RunWindow/reportID``), run ids in findings are mapped to their runs'
    /// report ids, times are the window's, and the sources show what the store holds from each of them.
    ///
    /// `findings` are the rule stage's, handed over: their run ids become report ids in place and they move
    /// on into the report, which then holds the only copy.
    func writeReport(
        store: any SQLBackedStore, rules: [Rule], findings: consuming [Finding], stats: [RuleRunResult.RuleStats],
        window: RunWindow, cases: [IncidentCase], sourceErrors: [String] = [], sourceWarnings: [String] = [],
        countQueries: RuleQueryPrefetch? = nil, coverage coverageSource: CoverageSource? = nil
    ) throws -> URL {
        let reportID = window.reportID
        let reportIDs = try reportIDsByRun(store)
        for index in findings.indices {
            findings[index].runID = reportID
            findings[index].firstSeenRunID = reportIDs[findings[index].firstSeenRunID] ?? reportID
        }
        var mappedCases = cases
        for index in mappedCases.indices {
            mappedCases[index].firstSeenRunID = reportIDs[cases[index].firstSeenRunID] ?? reportID
            mappedCases[index].lastSeenRunID = reportIDs[cases[index].lastSeenRunID] ?? reportID
            mappedCases[index].lastJoinedRunID = reportIDs[cases[index].lastJoinedRunID] ?? reportID
        }
        let writer = ReportWriter(reportsDirectory: config.reportsDirectory)
        removeStaleTemporaries(in: config.reportsDirectory)
        let coverageLines =
            rules.contains { $0.id == "IAP-012" }
            ? try coverage(store, now: window.until, source: coverageSource) : []
        let failedNotifications = try failedNotificationCounts(store)
        var input = ReportInput(
            runID: reportID, windowSince: window.since, windowUntil: window.until, startedAt: window.until,
            finishedAt: window.until, toolVersion: IAPGuardInfo.version, configHash: config.hash,
            referenceCurrency: config.referenceCurrency, sources: try storedSources(store, prefetched: countQueries),
            findings: findings,
            rules: rules.map {
                .init(
                    id: $0.id, title: $0.title, version: $0.version, description: $0.description, level: $0.level,
                    status: $0.status.rawValue, runbook: $0.runbook, falsePositives: $0.falsePositives)
            },
            ruleCounts: stats.map { .init(ruleID: $0.ruleID, evaluated: nil, error: $0.error) },
            quarantine: try quarantineCounts(store), history: (try? writer.readHistory()) ?? [],
            coverage: coverageLines, cases: mappedCases, failedNotifications: failedNotifications)
        input.sourcesAsStored = true
        input.setSourceProblems(errors: sourceErrors, warnings: sourceWarnings)
        return try writer.write(consume input)
    }

    /// Where the coverage line's gaps come from: already re-told for the scope (``CoverageGaps``), or the
    /// query telling every credit, running on a reader.
    struct CoverageSource {
        /// The store's run, which keeps the gaps it tells.
        var runID: Int64
        var refreshed: Bool
        var query: RuleQueryPrefetch?
    }

    /// The coverage lines: standing credits IAP-012 cannot check (no appAccountToken and no
    /// applicationUsername on the purchase, or a marker no account owns), by the source of the Apple record
    /// (`no Apple record` when there is none). Empty when every credit was checkable. Unless `source` says
    /// the kept gaps were re-told for the scope, every credit is told (on the reader when one runs it), and
    /// with a `source` the kept gaps are replaced for the next run.
    func coverage(_ store: any SQLBackedStore, now: Int64?, source: CoverageSource? = nil) throws
        -> [ReportInput.Coverage]
    {
        let gaps = CoverageGaps(connection: store.connection)
        let now = now ?? Int64.max
        var bySource: [String?: Int] = [:]
        if source?.refreshed == true {
            for row in try gaps.counts(now: now) { bySource[row[0].textValue] = Int(row[1].integerValue ?? 0) }
        } else {
            let all: [[SQLValue]]
            if let outcome = source?.query?.take(Self.coverageKey) {
                all = try outcome.rows.get().values
            } else {
                all = try store.connection.query(CoverageGaps.rowsSQL(scoped: false), [])
            }
            if let source { try gaps.replace(with: all, runID: source.runID) }
            for row in all where row.count == 3 {
                if let reversed = row[2].integerValue, reversed <= now { continue }
                bySource[row[1].textValue, default: 0] += 1
            }
        }
        var sources: [ReportInput.Coverage.SourceCount] = []
        var total = 0
        for (kind, count) in bySource {
            total += count
            sources.append(.init(source: kind ?? "no Apple record", count: count))
        }
        guard total > 0 else { return [] }
        sources.sort { ($0.count, $1.source) > ($1.count, $0.source) }
        return [
            ReportInput.Coverage(
                ruleID: "IAP-012", unchecked: total, reason: "no appAccountToken / applicationUsername",
                topSources: Array(sources.prefix(5)))
        ]
    }

    static let coverageKey = "report-coverage"

    /// The summary's store counts and the report's counts by source, as reader jobs keyed by their SQL
    /// (``rows(_:store:prefetched:)``). The record tables do not change after the ingest, so a reader's
    /// snapshot gives the same counts as the run's connection.
    static var storeCountJobs: [RuleQueryPrefetch.Job] {
        (StoreCounts.statements + [StoreCounts.quarantinedSQL] + sourceTables.map { sourceCountSQL($0.table) }).map {
            RuleQueryPrefetch.Job(key: $0, sql: $0, parameters: [:])
        }
    }

    /// The rows of `sql` (no parameters): from `prefetched` when a reader ran it (keyed by its text), else
    /// from the store's connection.
    func rows(_ sql: String, store: any SQLBackedStore, prefetched: RuleQueryPrefetch?) throws -> [[SQLValue]] {
        if let outcome = prefetched?.take(sql) { return try outcome.rows.get().values }
        return try store.connection.query(sql, [])
    }

    /// Store run id → the report id of its window.
    func reportIDsByRun(_ store: any SQLBackedStore) throws -> [Int64: Int64] {
        var out: [Int64: Int64] = [:]
        for row in try store.connection.query("SELECT run_id, window_until FROM run WHERE window_until IS NOT NULL", [])
        {
            if let id = row[0].integerValue, let until = row[1].integerValue {
                out[id] = RunWindow.reportID(until: until)
            }
        }
        return out
    }

    /// Each configured source as the store holds it: records kept, records quarantined, and the time of its
    /// latest record as the watermark. Per-run read counts stay out of the report (they differ between a
    /// run and its re-run); they are in the run summary, the `run_source` table and the metrics file.
    func storedSources(_ store: any SQLBackedStore, prefetched: RuleQueryPrefetch? = nil) throws
        -> [ReportInput.Source]
    {
        var stored: [String: (count: Int, latest: Int64?)] = [:]
        // Per table: the count by source over the (source, time) index, then each source's latest time by
        // one probe of it (migration 8); one query over all the tables read every row of the store.
        for (table, time) in Self.sourceTables {
            var sources: [String] = []
            for row in try rows(Self.sourceCountSQL(table), store: store, prefetched: prefetched) {
                let name = row[0].textValue ?? ""
                sources.append(name)
                stored[name, default: (0, nil)].count += Int(row[1].integerValue ?? 0)
            }
            for name in sources {
                let latest = try store.connection.query(Self.sourceLatestSQL(table, time), [.text(name)])
                    .first?.first?.integerValue
                if let latest, latest > (stored[name]?.latest ?? Int64.min) { stored[name]?.latest = latest }
            }
        }
        var quarantined: [String: Int] = [:]
        for row in try store.connection.query("SELECT source_name, COUNT(*) FROM quarantine GROUP BY source_name", []) {
            quarantined[row[0].textValue ?? ""] = Int(row[1].integerValue ?? 0)
        }
        // File sources, then App Store Server API sources (their sightings and notifications carry the API
        // source's name).
        let configured =
            config.sources.map { ($0.name, $0.kind.rawValue) } + config.appStoreAPI.map { ($0.name, "app-store-api") }
        return configured.map { name, kind in
            let entry = stored[name]
            return ReportInput.Source(
                name: name, kind: kind, records: entry?.count ?? 0, inserted: 0, updated: 0,
                unchanged: 0, errors: quarantined[name] ?? 0,
                watermark: entry?.latest.map { "latest record " + TimeParser.iso8601($0) })
        }
    }

    /// The record tables and the time each one's latest record is told by (the sightings': the signed date,
    /// else the purchase date, else when it was received).
    static let sourceTables: [(table: String, time: String)] = [
        ("apple_sighting", "COALESCE(signed_date, purchase_date, received_at)"), ("backend_order", "created_at"),
        ("credit", "credited_at"), ("notification", "signed_date"), ("user_account", "created_at"),
    ]

    /// Records of `table` by source (a walk of the `(source_name, time)` index).
    static func sourceCountSQL(_ table: String) -> String {
        "SELECT source_name, COUNT(*) FROM \(table) GROUP BY source_name"
    }

    /// The latest time of one source's records in `table` (one probe of the `(source_name, time)` index).
    static func sourceLatestSQL(_ table: String, _ time: String) -> String {
        "SELECT MAX(\(time)) FROM \(table) WHERE source_name = ?"
    }

    func quarantineCounts(_ store: any SQLBackedStore) throws -> [ReportInput.QuarantineCount] {
        // The first few locations of each reason, in the order they were quarantined (bounded per reason).
        var locations: [String: [String]] = [:]
        for row in try store.connection.query(Self.firstQuarantineLocationsSQL, []) {
            locations[(row[0].textValue ?? "") + "\u{0}" + (row[1].textValue ?? ""), default: []].append(
                row[2].textValue ?? "")
        }
        return try store.connection.query(
            "SELECT source_name, reason, COUNT(*) FROM quarantine GROUP BY source_name, reason ORDER BY 1, 2", []
        ).map {
            let (source, reason) = ($0[0].textValue ?? "", $0[1].textValue ?? "")
            return .init(
                sourceName: source, reason: reason, count: Int($0[2].integerValue ?? 0),
                locations: locations[source + "\u{0}" + reason] ?? [])
        }
    }

    /// The notifications the store holds that failed verification, by source and reason (`nil` when none).
    func failedNotificationCounts(_ store: any SQLBackedStore) throws -> [ReportInput.FailedNotificationCount]? {
        let counts = try store.connection.query(
            """
            SELECT source_name, COALESCE(verification_reason, 'failed'), COUNT(*) FROM notification
            WHERE verification = 'failed' GROUP BY source_name, COALESCE(verification_reason, 'failed') ORDER BY 1, 2
            """, []
        ).map {
            ReportInput.FailedNotificationCount(
                sourceName: $0[0].textValue ?? "", reason: $0[1].textValue ?? "", count: Int($0[2].integerValue ?? 0))
        }
        return counts.isEmpty ? nil : counts
    }

    /// Each source and reason's first ``ReportInput/QuarantineCount/maxLocations`` locations.
    static let firstQuarantineLocationsSQL = """
        SELECT source_name, reason, location FROM (
            SELECT source_name, reason, location,
                ROW_NUMBER() OVER (PARTITION BY source_name, reason ORDER BY quarantine_id) AS n
            FROM quarantine) AS q
        WHERE n <= \(ReportInput.QuarantineCount.maxLocations) ORDER BY source_name, reason, n
        """

    /// Removes temporary folders and files a killed run left in the reports folder (we hold the lock).
    func removeStaleTemporaries(in directory: URL) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasPrefix(".tmp-") || name.hasPrefix(".old-") {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }
}
