import Foundation
import Logging

/// Runs the job end to end: lock → store → sources → verify → store → rules → reports.
///
/// Crash safety: every stage commits in SQLite transactions (each ingest batch; a file's state only after
/// its data; the whole rule stage — findings, the report and the run's final status — as one transaction
/// that commits after the report folder was renamed into place). A run killed at any point leaves a
/// consistent store; the next run resumes it (same run id) and redoes what was not committed, which is
/// idempotent. Reports depend only on the store's data and the window (see ``RunWindow``), so re-running a
/// window produces the same bytes.
public struct Pipeline {
    public let config: Config
    public let verifier: any AppleRecordVerifier
    public let logger: Logger
    /// Progress display for long stages (silent unless stderr is a terminal).
    public var progress: ProgressMeter
    /// Called once the lock is held and the run is recorded (with its run id), e.g. for a healthcheck ping.
    public var onStarted: (Int64) -> Void = { _ in }

    public init(config: Config, verifier: any AppleRecordVerifier, logger: Logger, progress: ProgressMeter = .silent) {
        self.config = config
        self.verifier = verifier
        self.logger = logger
        self.progress = progress
    }

    /// Options of one run.
    public struct Options: Sendable {
        /// The window's start (epoch ms, inclusive); default: the stored watermark minus the look-back.
        public var since: Int64?
        /// The window's end (epoch ms, exclusive) and the rules' "now"; defaults to the wall clock.
        public var until: Int64?
        /// Findings at or above this level make the run exit with the findings code (`nil`: never).
        public var failOn: Finding.Level?
        /// Run against a temporary copy of the store; write no report, no watermark, nothing.
        public var dryRun: Bool
        /// Re-read every input file (ignore the recorded file states) and start the window at the beginning.
        public var fullRebuild: Bool
        /// Records per ingest batch (the batches are committed ``Pipeline/batchesPerWriteGroup`` at a time).
        public var batchSize: Int
        /// What `failOn` counts: active hits (the default) or open cases (`open` or `investigating`), so
        /// that a case an analyst closed no longer fails the job.
        public var failOnOpenCases = false

        public init(
            since: Int64? = nil, until: Int64? = nil, failOn: Finding.Level? = .high, dryRun: Bool = false,
            fullRebuild: Bool = false, batchSize: Int = 20_000
        ) {
            self.since = since
            self.until = until
            self.failOn = failOn
            self.dryRun = dryRun
            self.fullRebuild = fullRebuild
            self.batchSize = batchSize
        }
    }

    /// Thrown inside the ingest sink to stop between batches after SIGTERM/SIGINT.
    struct StopRequested: Error {}

    /// Runs the job. A dry run works on a temporary copy of the store and writes nothing.
    public func run(_ options: Options = Options(), shouldStop: @escaping () -> Bool = { false }) throws -> RunSummary {
        guard options.dryRun else {
            return try execute(options, location: config.storeLocation, writesReports: true, shouldStop: shouldStop)
        }
        guard case .sqlite = config.storeLocation else {
            throw ConfigError(
                file: config.file.path, key: "store",
                message: "--dry-run works on a copy of a SQLite store; it is not supported with a PostgreSQL store")
        }
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent(
            "iapguard-dry-run-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let copy = scratch.appendingPathComponent("store.sqlite").path
        try Self.copyStore(from: config.storePath.path, to: copy)
        logger.info("dry run: working on a copy of the store", metadata: ["copy": "\(copy)"])
        var summary = try execute(
            options, location: .sqlite(path: copy), writesReports: false, shouldStop: shouldStop)
        summary.dryRun = true
        summary.storePath = config.storePath.path
        return summary
    }

    /// Copies a store with SQLite's `VACUUM INTO` (a consistent snapshot, even while another run writes).
    static func copyStore(from source: String, to destination: String) throws {
        // A first load killed midway leaves a store the real run deletes: the copy starts empty too.
        guard FileManager.default.fileExists(atPath: source), !FirstLoadMarker(storePath: source).exists else {
            return
        }
        let database = try SQLiteDatabase(path: source, mode: .readOnly)
        _ = try database.run("VACUUM INTO ?", [.text(destination)])
    }

    /// The run proper on the store at `location`.
    func execute(
        _ options: Options, location: StoreLocation, writesReports: Bool, shouldStop: @escaping () -> Bool
    ) throws -> RunSummary {
        let (store, lock, discarded) = try location.openForRun()
        defer { withExtendedLifetime(lock) {} }
        defer { try? store.endIngestCheckpoints() }
        if discarded {
            logger.warning(
                "the store's first load was killed or failed (see the previous run's error) while it wrote without a journal: the store was deleted and is loaded again",
                metadata: ["store": "\(store.location)"])
        }
        let storePath = store.location
        let startedAt = Clock.nowMillis()
        let window = try RunWindow.resolve(
            options: options, store: store, lookbackHours: config.lookbackHours, now: startedAt)
        let start = RunStart(
            startedAt: startedAt, windowSince: window.since, windowUntil: window.until, configHash: config.hash,
            toolVersion: IAPGuardInfo.version)
        let resumed = try resumeInterruptedRun(store, start)
        let runID = try resumed?.runID ?? store.beginRun(start)
        var summary = RunSummary(runID: runID, storePath: storePath)
        summary.startedAt = startedAt
        summary.window = window
        summary.reportID = window.reportID
        summary.resumedFrom = resumed?.status
        logger.info(
            "run started",
            metadata: [
                "run_id": "\(runID)", "store": "\(storePath)", "until": "\(TimeParser.iso8601(window.until))",
                "since": "\(window.since.map(TimeParser.iso8601) ?? "beginning")",
                "full_rebuild": "\(options.fullRebuild)", "dry_run": "\(options.dryRun)",
            ])
        onStarted(runID)
        let rulesLoading = config.rulesDirectory.map { RuleSetPrefetch(folder: $0) }
        do {
            summary.stageSeconds["reference"] = try Self.measure { try loadReferenceData(store, summary: &summary) }
            let ingestSeconds = try Self.measure {
                try ingestSources(
                    store: store, runID: runID, options: options, summary: &summary, shouldStop: shouldStop)
            }
            summary.stageSeconds["ingest"] = ingestSeconds
            // The parse workers' freed batches stay in their allocator arenas otherwise (see FreedMemory).
            FreedMemory.release()
            // A signal during the index build or the API pull stops the run before the rules, too.
            if !summary.stopped, shouldStop() { summary.stopped = true }
            if summary.stopped {
                try fillStoreCounts(store, into: &summary)
                logger.warning("stopped on a signal between batches", metadata: ["run_id": "\(runID)"])
                try finish(store, &summary)
            } else {
                do {
                    try evaluateReportAndFinish(
                        store: store, window: window, options: options, writesReports: writesReports,
                        rules: rulesLoading?.result(), summary: &summary, shouldStop: shouldStop)
                } catch is StopRequested {
                    // The rule stage's transaction was rolled back: the earlier findings stand, and the next
                    // run evaluates what this one ingested.
                    summary.stopped = true
                    summary.activeHits = [:]
                    try fillStoreCounts(store, into: &summary)
                    logger.warning("stopped on a signal during the rule stage", metadata: ["run_id": "\(runID)"])
                    try finish(store, &summary)
                }
            }
        } catch {
            summary.finishedAt = Clock.nowMillis()
            try? store.finishRun(
                runID, status: "failed", finishedAt: summary.finishedAt, summaryJSON: summary.jsonText())
            throw error
        }
        CrashPoint.shared.reached("finish")
        return summary
    }

    /// Runs `body` and returns its wall time in seconds.
    static func measure(_ body: () throws -> Void) throws -> Double {
        let start = Date()
        try body()
        return Date().timeIntervalSince(start)
    }

    /// Takes over the latest run if it did not complete — killed (`running`: we hold the lock, so its
    /// process is gone), `stopped` on a signal or `failed` — so that the records it committed and the records
    /// this run adds carry the same run id, exactly as if it had not been interrupted. Returns its id and
    /// former status, or nil when the latest run completed (a new run is started).
    func resumeInterruptedRun(_ store: any SQLBackedStore, _ start: RunStart) throws -> (runID: Int64, status: String)?
    {
        guard let latest = try store.latestRun(), ["running", "stopped", "failed"].contains(latest.status) else {
            return nil
        }
        let (runID, status) = latest
        try store.restartRun(runID, start)
        logger.warning(
            "resuming an interrupted run: what it committed is kept, the rest is redone",
            metadata: ["run_id": "\(runID)", "was": "\(status)"])
        return (runID, status)
    }

    /// Loads the config's apps, catalog, testers and FX rates (one transaction). A bad FX row is
    /// quarantined (the rest is loaded; the summary says what lacks a rate); conflicting rows are an error.
    func loadReferenceData(_ store: any SQLBackedStore, summary: inout RunSummary) throws {
        var reference = config.referenceData
        if let fx = config.fxRatesFile {
            let file = try FXRateFile.readSnapshot(fx, source: fx.lastPathComponent)
            reference.fxRates = file.rates
            if !file.badRows.isEmpty {
                var batch = IngestBatch()
                batch.quarantined = file.badRows
                _ = try store.write(batch, runID: summary.runID)
                // Bounded: a file of many bad rows would make one line of thousands of entries.
                let shown = file.lacking.prefix(10).joined(separator: ", ")
                let more = file.lacking.count > 10 ? " and \(file.lacking.count - 10) more" : ""
                let lacking = file.lacking.isEmpty ? "" : "; no rate for " + shown + more
                summary.warnings.append(
                    "fx_rates: \(file.badRows.count) bad row(s) quarantined (first: \(file.badRows[0].location): "
                        + "\(file.badRows[0].reason))\(lacking)")
            }
            for conflict in file.conflicts { summary.errors.append("fx_rates: \(conflict)") }
            for problem in summary.warnings + summary.errors where problem.hasPrefix("fx_rates:") {
                logger.warning("fx rates", metadata: ["problem": "\(problem)"])
            }
        }
        reference.fxRates = fetchFXRates(store: store, snapshot: reference.fxRates)
        try store.replaceReferenceData(reference)
    }

    /// Ingests every configured source in order; stops between batches when asked.
    func ingestSources(
        store: any SQLBackedStore, runID: Int64, options: Options, summary: inout RunSummary,
        shouldStop: @escaping () -> Bool
    ) throws {
        let prefetch = fileStatePrefetch(store: store, options: options)
        defer { prefetch?.cancel() }
        // A first load writes its rows without the big tables' secondary indexes and builds them once after.
        let bulkLoad = try store.beginBulkLoad()
        if bulkLoad { logger.info("first load: secondary indexes are built after the rows") }
        // Every source is read, parsed and verified ahead of the writer, in order, on other threads.
        var plans: [IngestFeed.Plan] = []
        var planFailures: [(any Error)?] = []
        for source in config.sources {
            var ingestor = SourceIngestor(
                source: source, verifier: verifier, configHash: config.fileStateHash, batchSize: options.batchSize)
            ingestor.prefetch = prefetch
            do {
                plans.append(try ingestor.plan(store: store, skipUnchanged: !options.fullRebuild))
                planFailures.append(nil)
            } catch let error as SourceError {
                // The source's ingest reports it (a missing folder); the others go on.
                plans.append(IngestFeed.Plan(ingestor: ingestor, files: []))
                planFailures.append(error)
            }
        }
        let feed = IngestFeed(plans: plans)
        defer { feed.cancel() }
        // The checkpointer outlives the ingest: the rule stage waits for its last checkpoint once the scope
        // is built (``endIngestCheckpoints()``), and the run ends it on any other way out (``execute``).
        if !bulkLoad { try store.beginIngestCheckpoints() }
        var indexSeconds = 0.0
        var indexed: Set<String> = []
        for (index, plan) in plans.enumerated() {
            if shouldStop() {
                summary.stopped = true
                break
            }
            try ingestSource(
                plan.ingestor, events: feed.events(index), planFailure: planFailures[index], store: store,
                runID: runID, summary: &summary, shouldStop: shouldStop)
            if summary.stopped { break }
            // A table no later source writes is indexed now, on this thread, while the feed parses and
            // verifies the next sources on the other cores; the last sources' tables wait for the end.
            if bulkLoad, index + 1 < plans.count {
                let written = Set(plans[...index].flatMap { StoreRecords.tables(writtenBy: $0.ingestor.source.kind) })
                let later = Set(
                    plans[(index + 1)...].flatMap { StoreRecords.tables(writtenBy: $0.ingestor.source.kind) })
                let ready = written.subtracting(later).subtracting(indexed)
                if !ready.isEmpty {
                    indexSeconds += try Self.measure { try store.buildDeferredIndexes(on: ready) }
                    indexed.formUnion(ready)
                    logger.debug("indexes built early", metadata: ["tables": "\(ready.sorted())"])
                }
            }
        }
        store.requestIngestCheckpoint()
        // Stopped on a signal: the next run goes on with the load and builds them.
        if bulkLoad, !summary.stopped {
            // The index build's sorter would otherwise come on top of the parse workers' freed batches, which
            // stay in their arenas (FreedMemory): at 1M its phase held 460–476 MiB, and 171–212 MiB trimmed.
            FreedMemory.release()
            let seconds = try Self.measure { try store.finishBulkLoad() } + indexSeconds
            summary.stageSeconds["index"] = seconds
            logger.info("indexes built", metadata: ["seconds": "\(String(format: "%.1f", seconds))"])
        } else if bulkLoad {
            try store.secureBulkLoad()
        }
        if !summary.stopped {
            // Credits that name only their order take the order's transaction, whichever of the two came first.
            let linked = try store.linkCreditsToOrderTransactions(runID: runID)
            if linked > 0 {
                logger.info("credits linked to their order's transaction", metadata: ["credits": "\(linked)"])
            }
            // Clawbacks written as ledger rows reverse the credits they take back, in whichever run either came.
            let reversed = try store.applyCreditClawbacks(runID: runID)
            if reversed > 0 {
                logger.info("credits reversed by clawback ledger rows", metadata: ["credits": "\(reversed)"])
            }
        }
        // After the files: which transactions and refunds to ask Apple about follows from the credits.
        try pullAppStoreAPI(
            store: store, runID: runID, since: options.since, summary: &summary, shouldStop: shouldStop)
    }

    /// Starts hashing, on every core, the input files this run will have to hash (the ones `stat` cannot
    /// skip), when there are at least two; nil otherwise. A source whose files cannot be listed is left to
    /// its ingest, which reports it.
    func fileStatePrefetch(store: any SQLBackedStore, options: Options) -> FileStatePrefetch? {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        guard cores > 1 else { return nil }
        var jobs: [FileStatePrefetch.Job] = []
        for source in config.sources {
            let ingestor = SourceIngestor(source: source, verifier: verifier, configHash: config.fileStateHash)
            jobs += (try? ingestor.prefetchJobs(store: store, skipUnchanged: !options.fullRebuild)) ?? []
        }
        guard jobs.count > 1 else { return nil }
        return FileStatePrefetch(jobs: jobs, threads: cores)
    }

    /// The batches an ingest commits together: see ``SQLiteStore/beginWriteGroup()``.
    static let batchesPerWriteGroup = 5

    /// Ingests one source from its feed: batches committed in groups (``batchesPerWriteGroup``), the source's counts after its
    /// data.
    func ingestSource(
        _ ingestor: SourceIngestor, events: IngestFeed.Events, planFailure: (any Error)?, store: any SQLBackedStore,
        runID: Int64, summary: inout RunSummary, shouldStop: @escaping () -> Bool
    ) throws {
        let source = ingestor.source
        let (startedAt, startedCPU) = (ContinuousClock.now, ProcessCPUTime.seconds())
        var counts = WriteCounts()
        var failure: String?
        var health = SourceHealth(source: source)
        if source.format == .postgres { health.markRead() }
        progress.begin("ingest \(source.name)", unit: "records")
        do {
            defer { progress.end() }
            if let planFailure { throw planFailure }
            // Batches are committed in groups of `batchesPerWriteGroup` (with the file states recorded
            // among them); what a source wrote before it failed or was stopped is committed too, as when
            // every batch committed on its own. A killed run, or a batch the store fails to write, loses
            // the open group, and the rerun redoes it.
            var grouped = 0
            try store.beginWriteGroup()
            defer { try? store.commitWriteGroup() }
            let skipped = try ingestor.consume(
                events, store: store, runID: runID,
                sink: { batch in
                    health.observe(batch)
                    let written = try store.write(batch, runID: runID)
                    counts = counts + written
                    progress.advance(by: written.records)
                    grouped += written.records
                    if grouped >= Self.batchesPerWriteGroup * max(1, ingestor.batchSize) {
                        try store.commitWriteGroup()
                        try store.beginWriteGroup()
                        grouped = 0
                    }
                    CrashPoint.shared.reached("ingest")
                    if shouldStop() { throw StopRequested() }
                }, shouldStop: shouldStop,
                fileDone: { _ in CrashPoint.shared.reached("ingest") }, delivered: { health.delivered($0) })
            try store.commitWriteGroup()
            counts = counts + skipped
            // A folder that holds no file delivered nothing, which a 0-byte file would have warned about.
            if source.format != .postgres, health.deliveries.isEmpty, skipped.filesSkipped == 0,
                (try? ingestor.files())?.isEmpty == true
            {
                health.foundEmptyFolder(source.path.path)
            }
        } catch let error as SourceError {
            failure = error.description
        } catch is StopRequested {
            summary.stopped = true
        }
        if failure == nil, !summary.stopped {
            let earlier = try health.needsEarlierRecords && hasEarlierRecords(store, source)
            let verdict = health.verdict(hadEarlierRecords: earlier)
            if !verdict.errors.isEmpty {
                failure = verdict.errors.map { "source \(source.name): \($0)" }.joined(separator: "; ")
            }
            for warning in verdict.warnings {
                summary.warnings.append("source \(source.name): \(warning)")
                logger.warning(
                    "source delivery warning", metadata: ["source": "\(source.name)", "warning": "\(warning)"])
            }
        }
        let elapsed = startedAt.duration(to: .now)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let cpuSeconds = ProcessCPUTime.seconds() - startedCPU
        try store.recordSourceCounts(
            runID: runID, sourceName: source.name, sourceKind: source.kind.rawValue, counts: counts)
        if let failure {
            summary.errors.append(failure)
            logger.error("source failed", metadata: ["source": "\(source.name)", "error": "\(failure)"])
        } else {
            var metadata: Logger.Metadata = [
                "source": "\(source.name)", "records": "\(counts.records)", "inserted": "\(counts.inserted)",
                "updated": "\(counts.updated)", "unchanged": "\(counts.unchanged)", "errors": "\(counts.errors)",
                "files_skipped": "\(counts.filesSkipped)", "stopped": "\(summary.stopped)",
                "seconds": "\(String(format: "%.2f", seconds))",
            ]
            // Over a few milliseconds the CPU share says nothing.
            if seconds >= 0.5 { metadata["cpu_percent"] = "\(Int((100 * cpuSeconds / seconds).rounded()))" }
            logger.info("source ingested", metadata: metadata)
        }
        if !health.failedNotifications.isEmpty {
            for (reason, count) in health.failedNotifications {
                summary.failedNotifications[reason, default: 0] += Int64(count)
            }
            let total = health.failedNotifications.values.reduce(0, +)
            let more = total > health.firstFailedNotifications.count ? "; …" : ""
            logger.warning(
                "notifications failed verification (kept, never acted on)",
                metadata: [
                    "source": "\(source.name)", "failed": "\(total)",
                    "first": "\(health.firstFailedNotifications.joined(separator: "; "))\(more)",
                ])
        }
        if health.bad > 0 {
            // Where the bad records are, without a query on the store (the first few; all are in `quarantine`).
            let more = health.bad > health.firstBadRecords.count ? "; …" : ""
            logger.warning(
                "records quarantined",
                metadata: [
                    "source": "\(source.name)", "quarantined": "\(health.bad)",
                    "first": "\(health.firstBadRecords.joined(separator: "; "))\(more)",
                ])
        }
        summary.sources.append(
            .init(
                name: source.name, kind: source.kind.rawValue, counts: counts, error: failure, seconds: seconds,
                cpuSeconds: cpuSeconds))
    }

    /// Whether the store held records of `source` before this run (an empty delivery then means a gap).
    func hasEarlierRecords(_ store: any SQLBackedStore, _ source: Config.Source) throws -> Bool {
        let view: String
        switch source.kind {
        case .orders: view = "orders"
        case .credits: view = "credits"
        case .notifications: view = "notifications"
        case .receipts, .signedTransactions: view = "sightings"
        case .users: view = "users"
        }
        return try !store.connection.query(
            "SELECT 1 FROM \(view) WHERE source_name = ? LIMIT 1", [.text(source.name)]
        ).isEmpty
    }

    /// Closes the run record with the summary's status.
    func finish(_ store: any SQLBackedStore, _ summary: inout RunSummary) throws {
        summary.finishedAt = Clock.nowMillis()
        try store.finishRun(
            summary.runID, status: summary.status, finishedAt: summary.finishedAt, summaryJSON: summary.jsonText())
    }

    /// The store-wide counts every run's summary carries (``RunLedger/storeCounts()``).
    /// `prefetched`: the statements already running on a reader (``storeCountJobs``).
    func fillStoreCounts(
        _ store: any SQLBackedStore, into summary: inout RunSummary, prefetched: RuleQueryPrefetch? = nil
    ) throws {
        let counts = try StoreCounts.read { try rows($0, store: store, prefetched: prefetched) }
        summary.storeCounts = counts.rows
        summary.verification = counts.verification
        summary.failedSightings = counts.failedSightings
        summary.quarantined = counts.quarantined
    }
}
