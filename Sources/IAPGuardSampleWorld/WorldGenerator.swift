import Foundation
import IAPGuardTesting

/// Writes a deterministic synthetic world (Apple receipts, signed transactions and notifications, the
/// backend's orders and credits, FX rates, a config and the ground truth) in which every fraud pattern of
/// the rule catalog is injected next to benign look-alikes. See `docs/sample-world.md`.
///
/// Users are simulated one at a time, each from its own random stream derived from the seed and the user's
/// index, and records are written as they are produced: memory stays flat however many users are asked
/// for, and the same seed gives the same world (JWS signatures aside: ECDSA signatures are randomised).
public struct WorldGenerator: Sendable {
    /// What to generate.
    public struct Options: Sendable, Hashable {
        /// Seed of every random choice.
        public var seed: UInt64
        /// Regular users to simulate.
        public var users: Int
        /// Length of the window in days.
        public var days: Int
        /// End of the window (exclusive), epoch ms UTC.
        public var end: Int64
        /// The `rules:` entry of the generated config; omitted when `nil`.
        public var rulesPath: String?
        /// Fraction (0…1) of the ordinary StoreKit 2 purchases delivered as signed JWS transactions; the others
        /// are delivered as verifyReceipt-style records (signing millions of payloads is slow). Injected
        /// patterns and notifications are always signed. 1 by default: the world is then the same as without
        /// the option.
        public var signSample: Double

        /// The defaults: seed 42, 3000 users, 60 days ending 2026-11-01T00:00:00Z, everything signed.
        public init(
            seed: UInt64 = 42, users: Int = 3000, days: Int = 60, end: Int64 = WorldGenerator.defaultEnd,
            rulesPath: String? = nil, signSample: Double = 1
        ) {
            self.seed = seed
            self.users = users
            self.days = days
            self.end = end
            self.rulesPath = rulesPath
            self.signSample = signSample
        }

        /// Start of the window, epoch ms.
        public var start: Int64 { end - Int64(days) * 86_400_000 }
    }

    /// Why a world could not be generated.
    public struct GenerateError: Error, Sendable, CustomStringConvertible {
        /// What was wrong with the options.
        public let description: String
    }

    /// 2026-11-01T00:00:00Z.
    public static let defaultEnd: Int64 = WorldTime.daysFromCivil(year: 2026, month: 11, day: 1) * WorldTime.day

    /// What this generator writes.
    public let options: Options
    private let signer: any JWSSigning
    private let foreignSigner: any JWSSigning
    private let rootDER: Data
    private let writeSigningMaterial: (@Sendable (URL) throws -> Void)?

    /// A generator signing with `signer` (whose root `rootDER` the config trusts) and forging with
    /// `foreignSigner` (an untrusted chain). `writeSigningMaterial`, when given, is called with the world's
    /// `certs/` folder to store what is needed to re-sign.
    public init(
        options: Options, signer: any JWSSigning, foreignSigner: any JWSSigning, rootDER: Data,
        writeSigningMaterial: (@Sendable (URL) throws -> Void)? = nil
    ) {
        self.options = options
        self.signer = signer
        self.foreignSigner = foreignSigner
        self.rootDER = rootDER
        self.writeSigningMaterial = writeSigningMaterial
    }

    /// A generator with freshly generated test chains (trusted and untrusted), valid from 30 days before
    /// the window to a year after it.
    public init(options: Options) throws {
        let notBefore = Date(timeIntervalSince1970: Double(options.start - 30 * WorldTime.day) / 1000)
        let notAfter = Date(timeIntervalSince1970: Double(options.end + 365 * WorldTime.day) / 1000)
        let trusted = try TestSigningChain.generate(
            options: .init(leafNotBefore: notBefore, leafNotAfter: notAfter, commonNamePrefix: "iapguard Test"))
        let foreign = try TestSigningChain.generate(
            options: .init(leafNotBefore: notBefore, leafNotAfter: notAfter, commonNamePrefix: "Untrusted Forger"))
        self.init(
            options: options, signer: trusted, foreignSigner: foreign, rootDER: trusted.rootDER,
            writeSigningMaterial: { directory in
                try trusted.write(to: directory, prefix: "test")
                try foreign.write(to: directory, prefix: "untrusted")
            })
    }

    /// `<currentDirectory>/rules` made absolute when that folder exists, else `nil`.
    public static func defaultRulesPath(currentDirectory: String = FileManager.default.currentDirectoryPath)
        -> String?
    {
        let url = URL(fileURLWithPath: currentDirectory).appendingPathComponent("rules").standardizedFileURL
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), isDirectory.boolValue
        else { return nil }
        return url.path
    }

    /// Writes the world into `directory` (created if needed; existing world files are replaced).
    public func write(to directory: URL) throws -> WorldSummary {
        guard options.users >= 1 else { throw GenerateError(description: "--users must be at least 1") }
        guard options.days >= 1 else { throw GenerateError(description: "--days must be at least 1") }
        guard (0...1).contains(options.signSample) else {
            throw GenerateError(description: "--sign-sample must be between 0 and 1")
        }
        let fm = FileManager.default
        let data = directory.appendingPathComponent("data")
        let certs = directory.appendingPathComponent("certs")
        try fm.createDirectory(at: data, withIntermediateDirectories: true)
        try fm.createDirectory(at: certs, withIntermediateDirectories: true)
        try writeSigningMaterial?(certs)
        try rootDER.write(to: certs.appendingPathComponent("test-root.der"))

        let fx = SyntheticFXRates.csv(
            firstDay: WorldTime.dayNumber(options.start) - 7, lastDay: WorldTime.dayNumber(options.end))
        try Data(fx.utf8).write(to: data.appendingPathComponent("fx-rates.csv"))

        let schedule = WorldSchedule(users: options.users)
        let parameters = WorldParameters(
            seed: options.seed, users: options.users, start: options.start, end: options.end, schedule: schedule,
            signSample: options.signSample)
        let sink = try WorldSink(directory: directory, signer: signer, foreignSigner: foreignSigner)
        for index in 0..<options.users {
            try autoreleasepoolIfAvailable {
                try UserSimulator(index: index, parameters: parameters, sink: sink).run()
            }
        }
        try sink.close()

        let testers = schedule.testerIndices.map { UserProfile.make(index: $0, seed: options.seed).id }
        let config = WorldConfigWriter.yaml(rulesPath: options.rulesPath, testers: testers)
        try Data(config.utf8).write(to: directory.appendingPathComponent("iapguard.yml"))

        var lines = sink.fileLines
        lines["data/fx-rates.csv"] = fx.split(separator: "\n").count - 1
        return WorldSummary(
            users: options.users, purchases: sink.purchases, fileLines: lines, truthByPattern: sink.truthByPattern,
            truthByRule: sink.truthByRule)
    }

    private func autoreleasepoolIfAvailable(_ body: () throws -> Void) throws {
        #if canImport(ObjectiveC)
            try autoreleasepool { try body() }
        #else
            try body()
        #endif
    }
}

extension WorldGenerator {
    /// Parses `YYYY-MM-DD` to epoch ms at 00:00 UTC, or `nil`.
    public static func parseDay(_ text: String) -> Int64? { WorldTime.parseDate(text) }
}
