import ArgumentParser
import Foundation
import IAPGuardSampleWorld

/// The options `demo` and `generate` share: where the sample world goes and what it looks like.
struct WorldOptions: ParsableArguments {
    @Option(name: .long, help: "Folder to write the world into (its store and reports go there too with demo).")
    var out: String

    @Option(name: .long, help: "Seed of every random choice (same seed, same world).")
    var seed: UInt64 = 42

    @Option(name: .long, help: "Number of regular users to simulate.")
    var users: Int = 3000

    @Option(name: .long, help: "Length of the window in days.")
    var days: Int = 60

    @Option(name: .long, help: "The rules folder the world's config names (default: ./rules if it exists).")
    var rules: String?

    func validate() throws {
        guard users >= 1 else { throw ValidationError("--users must be at least 1") }
        guard days >= 1 else { throw ValidationError("--days must be at least 1") }
    }

    private var currentDirectory: URL { URL(fileURLWithPath: FileManager.default.currentDirectoryPath) }

    /// `--out` made absolute.
    var directory: URL { URL(fileURLWithPath: out, relativeTo: currentDirectory).standardizedFileURL }

    /// `--rules` made absolute, else `./rules` when that folder exists, else `nil`.
    var rulesPath: String? {
        rules.map { URL(fileURLWithPath: $0, relativeTo: currentDirectory).standardizedFileURL.path }
            ?? WorldGenerator.defaultRulesPath()
    }

    /// The generator's options for a window ending at `end` (epoch ms).
    func generatorOptions(end: Int64, signSample: Double = 1) -> WorldGenerator.Options {
        WorldGenerator.Options(
            seed: seed, users: users, days: days, end: end, rulesPath: rulesPath, signSample: signSample)
    }
}
