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

    @Option(name: .long, help: "Folder for the world, its store and its reports.")
    var out: String

    @Option(name: .long, help: "Seed of every random choice (same seed, same world).")
    var seed: UInt64 = 42

    @Option(name: .long, help: "Number of regular users to simulate.")
    var users: Int = 3000

    @Option(name: .long, help: "Length of the window in days.")
    var days: Int = 60

    @Option(name: .long, help: "The rules folder (default: ./rules).")
    var rules: String?

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
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        let rulesPath =
            rules.map { URL(fileURLWithPath: $0, relativeTo: cwd).standardizedFileURL.path }
            ?? WorldGenerator.defaultRulesPath()
        guard rulesPath != nil else {
            throw ValidationError("no rules folder: run from the repository root or pass --rules DIR")
        }
        let end = WorldGenerator.defaultEnd
        let options = WorldGenerator.Options(seed: seed, users: users, days: days, end: end, rulesPath: rulesPath)
        let directory = URL(fileURLWithPath: out, relativeTo: cwd).standardizedFileURL
        let world = try WorldGenerator(options: options).write(to: directory)
        FileHandle.standardError.write(Data("iapguard demo: wrote the sample world to \(directory.path)\n".utf8))
        logger.info("world written", metadata: ["summary": "\(world.description)"])
        let config = try Config.load(from: directory.appendingPathComponent("iapguard.yml"))
        // The rules' now is the world's end, so grace periods are judged as of the data, not the wall clock.
        try RunCommand.execute(config: config, options: Pipeline.Options(until: end, failOn: failLevel), logger: logger)
    }
}
