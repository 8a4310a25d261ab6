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

    @Option(name: .long, help: "The rules' now (RFC 3339); grace periods end before it. Default: the wall clock.")
    var until: String?

    func run() throws {
        LogSetup.bootstrap(format: logFormat, level: verbose ? .debug : .info)
        let logger = Logger(label: "iapguard.run")
        let loaded: Config
        do {
            loaded = try Config.load(from: URL(fileURLWithPath: config))
        } catch let error as ConfigError {
            logger.error("bad config", metadata: ["error": "\(error)"])
            FileHandle.standardError.write(Data("iapguard: \(error)\n".utf8))
            throw ExitCode(ExitCodes.badConfig)
        }
        guard let failLevel = RunExitCode.parseFailOn(failOn) else {
            throw ValidationError("--fail-on: expected informational, low, medium, high, critical or none")
        }
        var options = Pipeline.Options(failOn: failLevel)
        if let until {
            guard let ms = TimeParser.epochMillis(until) else {
                throw ValidationError("--until: expected an RFC 3339 time")
            }
            options.until = ms
        }
        try Self.execute(config: loaded, options: options, logger: logger)
    }

    /// Runs the pipeline and maps its outcome onto the documented exit codes.
    static func execute(config: Config, options: Pipeline.Options, logger: Logger) throws {
        let verifier: any AppleRecordVerifier
        do {
            verifier = try Verification.makeVerifier(for: config)
        } catch {
            FileHandle.standardError.write(Data("iapguard: \(error)\n".utf8))
            throw ExitCode(ExitCodes.badConfig)
        }
        let summary: RunSummary
        do {
            summary = try Pipeline(config: config, verifier: verifier, logger: logger).run(
                options, shouldStop: SignalFlag.shared.isSet)
        } catch let error as RunLock.Held {
            FileHandle.standardError.write(Data("iapguard: \(error)\n".utf8))
            throw ExitCode(ExitCodes.locked)
        } catch let error as ConfigError {
            FileHandle.standardError.write(Data("iapguard: \(error)\n".utf8))
            throw ExitCode(ExitCodes.badConfig)
        } catch let error as SourceError {
            FileHandle.standardError.write(Data("iapguard: \(error)\n".utf8))
            throw ExitCode(ExitCodes.badInput)
        }
        print(summary.text())
        if !summary.errors.isEmpty { throw ExitCode(ExitCodes.sourceUnreachable) }
        if summary.findingsAtOrAboveFailOn { throw ExitCode(ExitCodes.findings) }
    }
}
