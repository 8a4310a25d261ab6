import ArgumentParser
import Foundation
import IAPGuard
import IAPGuardSampleWorld
import Logging

/// `iapguard demo --out DIR`: writes the sample world and its config into DIR, then runs the whole job on it.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Generate the sample world into DIR and run the whole pipeline on it (reports in DIR/reports).",
        discussion: ExitCodes.help)

    @OptionGroup var world: WorldOptions

    @Option(name: .long, help: "Exit with code 2 when findings at or above this level are present.")
    var failOn: String = "none"

    @Option(name: .long, help: "Log format on stderr: auto, human or json.")
    var logFormat: LogFormat = .auto

    func run() throws {
        LogSetup.bootstrap(format: logFormat, level: .info)
        let logger = Logger(label: "iapguard.demo")
        guard let failLevel = RunExitCode.parseFailOn(failOn) else {
            throw ValidationError("--fail-on: expected informational, low, medium, high, critical or none")
        }
        guard world.rulesPath != nil else {
            throw ValidationError("no rules folder: run from the repository root or pass --rules DIR")
        }
        let end = WorldGenerator.defaultEnd
        let directory = world.directory
        let summary = try WorldGenerator(options: world.generatorOptions(end: end)).write(to: directory)
        FileHandle.standardError.write(Data("iapguard demo: wrote the sample world to \(directory.path)\n".utf8))
        logger.info("world written", metadata: ["summary": "\(summary.description)"])
        let config = try Config.load(from: directory.appendingPathComponent("iapguard.yml"))
        // The rules' now is the world's end, so grace periods are judged as of the data, not the wall clock.
        try RunCommand.execute(config: config, options: Pipeline.Options(until: end, failOn: failLevel), logger: logger)
    }
}
