import Foundation
import IAPGuard
import IAPGuardSampleWorld

/// The generated world a size runs on: written once under the data folder, reused while its parameters
/// match (`bench-world.txt`).
enum BenchWorld {
    /// Purchases per user over the 60-day window, measured on generated worlds (used to size `--users`).
    static let purchasesPerUser = 8.9
    static let days = 60

    static func users(for options: BenchOptions) -> Int {
        max(50, Int((Double(options.size) / purchasesPerUser).rounded()))
    }

    static func marker(_ options: BenchOptions) -> String {
        "users=\(users(for: options)) days=\(days) seed=42 sign-sample=\(options.effectiveSignSample)\n"
    }

    /// Generates the world unless one with the same parameters is there. Returns the config file.
    @discardableResult
    static func ensure(_ options: BenchOptions, quiet: Bool = false) throws -> URL {
        let world = options.worldDirectory
        let markerFile = world.appendingPathComponent("bench-world.txt")
        if let existing = try? String(contentsOf: markerFile, encoding: .utf8), existing == marker(options) {
            if !quiet { print("world: reusing \(world.path) (\(existing.trimmingCharacters(in: .newlines)))") }
            return world.appendingPathComponent("iapguard.yml")
        }
        try? FileManager.default.removeItem(at: world)
        let generatorOptions = WorldGenerator.Options(
            seed: 42, users: users(for: options), days: days,
            rulesPath: BenchOptions.repository.appendingPathComponent("rules").path,
            signSample: options.effectiveSignSample)
        Measure.header(
            "generate", "\(generatorOptions.users) users, \(days) days, sign-sample \(options.effectiveSignSample)")
        let generator = try WorldGenerator(options: generatorOptions)
        let (summary, seconds) = try Measure.time { try generator.write(to: world) }
        Measure.line(
            "generate", "world: \(summary.purchases) purchases",
            String(format: "%.1f s  ", seconds) + "\(Measure.rate(Double(summary.purchases), seconds)) purchases  "
                + "peak RSS \(Measure.mib(Measure.peakRSS()))")
        for (path, lines) in summary.fileLines.sorted(by: { $0.key < $1.key }) {
            let bytes =
                (try? FileManager.default.attributesOfItem(atPath: world.appendingPathComponent(path).path)[.size])
                as? Int ?? 0
            Measure.line("generate", "  \(path)", "\(lines) lines, \(Measure.mib(bytes))")
        }
        try Data(marker(options).utf8).write(to: markerFile)
        return world.appendingPathComponent("iapguard.yml")
    }

    static func stage(_ options: BenchOptions) throws {
        try ensure(options)
    }

    /// The world's config, loaded.
    static func config(_ options: BenchOptions) throws -> Config {
        try Config.load(from: ensure(options, quiet: true))
    }

    /// The world's window end: the rules' `now`.
    static let now = WorldGenerator.defaultEnd
}

/// Runs every stage, each in its own process (so each reports its own peak RSS).
enum AllStages {
    static func run(_ options: BenchOptions) throws {
        print(
            "iapguard-bench all --size \(options.sizeLabel) — \(ProcessInfo.processInfo.activeProcessorCount) cores, "
                + "load \(Measure.loadAverage()), data \(options.directory.path)")
        print("The machine is shared: every ratio below compares figures measured in this same run.")
        try FileManager.default.createDirectory(at: options.directory, withIntermediateDirectories: true)
        try BenchWorld.ensure(options)
        for stage in ["parse", "verify", "ingest", "rules", "reports", "run", "incremental"] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            process.arguments = [stage] + options.childArguments
            try process.run()
            process.waitUntilExit()
            if process.terminationStatus != 0 {
                print("stage \(stage) failed with status \(process.terminationStatus)")
            }
        }
    }
}
