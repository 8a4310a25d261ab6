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
        let verifier = try Verification.makeVerifier(for: loaded)
        do {
            let summary = try Pipeline(config: loaded, verifier: verifier, logger: logger).run(
                shouldStop: SignalFlag.shared.isSet)
            print(summary.text())
            if !summary.errors.isEmpty { throw ExitCode(ExitCodes.sourceUnreachable) }
        } catch let error as RunLock.Held {
            FileHandle.standardError.write(Data("iapguard: \(error)\n".utf8))
            throw ExitCode(ExitCodes.locked)
        }
    }
}
