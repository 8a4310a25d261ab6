import ArgumentParser
import Foundation
import IAPGuard
import Logging

/// `iapguard run --config FILE`: the cron job.
struct RunCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Pull, verify, store, check and report: the scheduled job.",
        discussion: ExitCodes.help)

    @Option(name: .long, help: "The config file (YAML).")
    var config: String

    @Option(name: .long, help: "Log format on stderr: auto (human on a terminal, JSON lines otherwise), human or json.")
    var logFormat: LogFormat = .auto

    @Flag(name: .long, help: "Log debug detail.")
    var verbose = false

    @Option(
        name: .long,
        help:
            "Exit with code 2 when findings at or above this level are present (informational, low, medium, high, critical, none)."
    )
    var failOn: String = "high"

    @Flag(
        name: .long,
        help:
            "--fail-on counts open cases (open or investigating) instead of active hits: a case an analyst closed no longer fails the run."
    )
    var failOnOpenCases = false

    @Option(
        name: .long,
        help:
            "Start of the window (RFC 3339, inclusive). Default: the end of the last successful run's window minus lookback_hours."
    )
    var since: String?

    @Option(
        name: .long,
        help: "End of the window (RFC 3339, exclusive) and the rules' now; grace periods end before it. Default: now.")
    var until: String?

    @Flag(name: .long, help: "Run everything against a temporary copy of the store; write no report, metrics or ping.")
    var dryRun = false

    @Flag(name: .long, help: "Re-read every input file and re-evaluate all history (after a rule or config change).")
    var fullRebuild = false

    @Option(name: .long, help: "Write Prometheus metrics here (node_exporter textfile collector format), atomically.")
    var metricsFile: String?

    @Option(
        name: .long, help: "Ping this URL on start (/start), success and failure (/fail); a failed ping is only logged."
    )
    var healthcheckURL: String?

    @Option(name: .long, help: "Records per ingest batch (batches are committed five at a time).")
    var batchSize: Int = 20_000

    func validate() throws {
        guard batchSize > 0 else { throw ValidationError("--batch-size must be at least 1") }
        if let since, TimeParser.epochMillis(since) == nil {
            throw ValidationError("--since: expected an RFC 3339 time such as 2025-03-01T00:00:00Z")
        }
        if let until, TimeParser.epochMillis(until) == nil {
            throw ValidationError("--until: expected an RFC 3339 time such as 2025-03-01T00:00:00Z")
        }
        if let healthcheckURL {
            guard let url = URL(string: healthcheckURL), url.scheme == "http" || url.scheme == "https" else {
                throw ValidationError("--healthcheck-url: expected an http(s) URL")
            }
        }
        guard RunExitCode.parseFailOn(failOn) != nil else {
            throw ValidationError("--fail-on: expected informational, low, medium, high, critical or none")
        }
    }

    func run() throws {
        LogSetup.bootstrap(format: logFormat, level: verbose ? .debug : .info)
        let logger = Logger(label: "iapguard.run")
        var loaded: Config
        do {
            loaded = try Config.load(from: URL(fileURLWithPath: config))
            try Self.resolveRules(&loaded, configPath: config, logger: logger)
        } catch let error as ConfigError {
            logger.error("bad config", metadata: ["error": "\(error)"])
            LogSetup.plainLine("\(error)")
            if let metricsFile, !dryRun {
                Self.writeMetrics(URL(fileURLWithPath: metricsFile), summary: nil, code: ExitCodes.badConfig, logger)
            }
            throw ExitCode(ExitCodes.badConfig)
        }
        var options = Pipeline.Options(
            failOn: RunExitCode.parseFailOn(failOn) ?? .high, dryRun: dryRun, fullRebuild: fullRebuild,
            batchSize: batchSize)
        options.failOnOpenCases = failOnOpenCases
        options.since = since.flatMap(TimeParser.epochMillis)
        options.until = until.flatMap(TimeParser.epochMillis)
        try Self.execute(
            config: loaded, options: options, logger: logger,
            metricsFile: metricsFile.map { URL(fileURLWithPath: $0) },
            healthcheck: healthcheckURL.flatMap(URL.init(string:)).map { HealthcheckPinger(url: $0) })
    }

    /// A run checks the rules its config names, else `./rules` as the other commands do; a config naming
    /// none, with no `./rules` either, is a config error: the run would ingest, find nothing and exit 0.
    static func resolveRules(_ config: inout Config, configPath: String, logger: Logger) throws {
        guard config.rulesDirectory == nil else { return }
        var isFolder: ObjCBool = false
        let fallback = URL(fileURLWithPath: "rules").standardizedFileURL
        guard FileManager.default.fileExists(atPath: fallback.path, isDirectory: &isFolder), isFolder.boolValue else {
            throw ConfigError(
                file: configPath, key: "rules",
                message:
                    "no rules folder: the config names none and there is no ./rules here; a run would check nothing. "
                    + "Add `rules: PATH` (relative to the config file)")
        }
        logger.notice("the config names no rules folder: using ./rules", metadata: ["rules": "\(fallback.path)"])
        config.rulesDirectory = fallback
    }

    /// Runs the pipeline, maps its outcome onto the documented exit codes, writes the metrics file and pings
    /// the healthcheck (neither for a dry run nor when another run holds the lock).
    static func execute(
        config: Config, options: Pipeline.Options, logger: Logger, metricsFile: URL? = nil,
        healthcheck: HealthcheckPinger? = nil
    ) throws {
        let pings = options.dryRun ? nil : healthcheck
        let verifier: any AppleRecordVerifier
        do {
            verifier = try Verification.makeVerifier(for: config)
        } catch {
            logger.error("bad config", metadata: ["error": "\(error)"])
            LogSetup.plainLine("\(error)")
            if let metricsFile, !options.dryRun {
                writeMetrics(metricsFile, summary: nil, code: ExitCodes.badConfig, logger)
            }
            throw ExitCode(ExitCodes.badConfig)
        }
        var pipeline = Pipeline(config: config, verifier: verifier, logger: logger, progress: ProgressMeter())
        pipeline.onStarted = { _ in ping(pings, .start, body: "", logger) }
        var summary: RunSummary?
        let code: Int32
        do {
            let finished = try pipeline.run(options, shouldStop: SignalFlag.shared.isSet)
            summary = finished
            code = exitCode(for: finished)
        } catch let error as RunLock.Held {
            logger.warning(
                "another run holds the lock", metadata: ["lock": "\(error.path)", "holder": "\(error.holder)"])
            LogSetup.plainLine("\(error)")
            throw ExitCode(ExitCodes.locked)
        } catch {
            code = exitCode(for: error)
            logger.error("run failed", metadata: ["error": "\(error)", "exit_code": "\(code)"])
            LogSetup.plainLine("\(error)")
        }
        if let metricsFile, !options.dryRun { writeMetrics(metricsFile, summary: summary, code: code, logger) }
        let line = summary?.oneLine(exitCode: code) ?? "iapguard: run failed · exit \(code)"
        ping(pings, code == ExitCodes.ok || code == ExitCodes.findings ? .success : .failure, body: line, logger)
        if let summary {
            print(summary.text())
            if summary.stopped {
                logger.warning("stopped early on a signal; committed work is kept and the next run continues")
            }
        }
        logger.notice(
            "\(line)",
            metadata: [
                "event": "run_finished", "exit_code": "\(code)", "run_id": "\(summary?.runID ?? 0)",
                "status": "\(summary?.status ?? "failed")", "active_hits": "\(summary?.activeHitCount ?? 0)",
            ])
        if code != ExitCodes.ok { throw ExitCode(code) }
    }

    /// The exit code of a run that returned a summary. A rule that could not be loaded or whose query failed
    /// is a partial run, like a source that could not be read: the findings it would have made are missing.
    static func exitCode(for summary: RunSummary) -> Int32 {
        if summary.stopped { return SignalFlag.shared.stopExitCode }
        if !summary.errors.isEmpty || !summary.ruleErrors.isEmpty { return ExitCodes.sourceUnreachable }
        if summary.findingsAtOrAboveFailOn { return ExitCodes.findings }
        return ExitCodes.ok
    }

    /// The exit code of a run that threw.
    static func exitCode(for error: any Error) -> Int32 {
        RunExitCode(error: error).rawValue
    }

    static func ping(_ pinger: HealthcheckPinger?, _ event: HealthcheckPinger.Event, body: String, _ logger: Logger) {
        guard let pinger else { return }
        if let problem = pinger.ping(event, body: body) {
            logger.warning(
                "healthcheck ping failed (the run is not affected)",
                metadata: ["url": "\(pinger.loggableTarget(event))", "error": "\(problem)"])
        }
    }

    static func writeMetrics(_ url: URL, summary: RunSummary?, code: Int32, _ logger: Logger) {
        let file = MetricsFile(path: url)
        let now = Clock.nowMillis()
        let completed = summary != nil && (code == ExitCodes.ok || code == ExitCodes.findings)
        let text = MetricsFile.render(
            summary: summary, exitCode: code, now: now,
            lastSuccess: completed ? (summary?.finishedAt ?? now) : file.previousLastSuccess())
        do {
            try file.write(text)
        } catch {
            logger.warning("cannot write the metrics file", metadata: ["path": "\(url.path)", "error": "\(error)"])
        }
    }
}
