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

    @OptionGroup var world: WorldOptions

    @Option(name: .long, help: "End of the window (exclusive), YYYY-MM-DD, UTC.")
    var end: String = "2026-11-01"

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
        guard (0...1).contains(signSample) else { throw ValidationError("--sign-sample must be between 0 and 1") }
    }

    func run() throws {
        guard let endMillis = WorldGenerator.parseDay(end) else {
            throw ValidationError("--end must be a date YYYY-MM-DD, got \(end)")
        }
        let generator = try WorldGenerator(options: world.generatorOptions(end: endMillis, signSample: signSample))
        let summary = try generator.write(to: world.directory)
        print(summary.description)
        if world.rulesPath == nil {
            // Not an error: the world is complete; its config only needs a rules folder before a run.
            FileHandle.standardError.write(
                Data(
                    ("iapguard: no --rules and no ./rules here: the world's iapguard.yml names no rules folder; "
                        + "add `rules: PATH` to it (or run from the repository root) before `iapguard run`\n").utf8))
        }
    }
}
