import ArgumentParser
import Foundation
import IAPGuard
import IAPGuardSampleWorld

/// `iapguard generate`: writes a deterministic synthetic sample world (see docs/sample-world.md).
struct GenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Write a synthetic sample world (Apple data, orders, credits, config, ground truth)."
    )

    @Option(name: .long, help: "Folder to write the world into.")
    var out: String

    @Option(name: .long, help: "Seed of every random choice.")
    var seed: UInt64 = 42

    @Option(name: .long, help: "Number of regular users to simulate.")
    var users: Int = 3000

    @Option(name: .long, help: "Length of the window in days.")
    var days: Int = 60

    @Option(name: .long, help: "End of the window (exclusive), YYYY-MM-DD, UTC.")
    var end: String = "2026-11-01"

    @Option(name: .long, help: "The rules folder written into the config (default: ./rules if it exists).")
    var rules: String?

    @Option(
        name: .long,
        help:
            "Fraction (0-1) of ordinary StoreKit 2 purchases written as signed JWS; the rest as verifyReceipt-style records (for size runs)."
    )
    var signSample: Double = 1

    func validate() throws {
        guard WorldGenerator.parseDay(end) != nil else {
            throw ValidationError("--end must be a date YYYY-MM-DD, got \(end)")
        }
        guard users >= 1 else { throw ValidationError("--users must be at least 1") }
        guard days >= 1 else { throw ValidationError("--days must be at least 1") }
        guard (0...1).contains(signSample) else { throw ValidationError("--sign-sample must be between 0 and 1") }
    }

    func run() throws {
        guard let endMillis = WorldGenerator.parseDay(end) else {
            throw ValidationError("--end must be a date YYYY-MM-DD, got \(end)")
        }
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        let rulesPath =
            rules.map { URL(fileURLWithPath: $0, relativeTo: cwd).standardizedFileURL.path }
            ?? WorldGenerator.defaultRulesPath()
        let options = WorldGenerator.Options(
            seed: seed, users: users, days: days, end: endMillis, rulesPath: rulesPath, signSample: signSample)
        let generator = try WorldGenerator(options: options)
        let summary = try generator.write(to: URL(fileURLWithPath: out, relativeTo: cwd).standardizedFileURL)
        print(summary.description)
    }
}
