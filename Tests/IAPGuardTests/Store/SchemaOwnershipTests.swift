import Foundation
import Logging
import Testing

@testable import IAPGuard
@testable import IAPGuardSampleWorld

/// The store owns its schema: every table, index and view exists right after the migrations, and nothing a
/// run does (ingest, the rule stage, a rewind, carried-over findings, reports) creates another one.
@Suite struct SchemaOwnershipTests {
    static func schemaObjects(_ path: String) throws -> [String] {
        let store = try SQLiteStore(path: path, readOnly: true)
        return try store.database.query(
            "SELECT type || ' ' || name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY 1"
        ).compactMap { $0[0].textValue }
    }

    @Test func runsCreateNoTableTheMigrationsDidNot() throws {
        let directory = TestScratch.root.appendingPathComponent("iapguard-schema-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let end = WorldGenerator.defaultEnd
        _ = try WorldGenerator(
            options: .init(
                seed: 11, users: 40, days: 3, end: end,
                rulesPath: Fixtures.repoRoot.appendingPathComponent("rules").path)
        ).write(to: directory)
        let config = try Config.load(from: directory.appendingPathComponent("iapguard.yml"))
        try StoreLocation.sqlite(path: config.storePath.path).open().migrate()
        let afterMigrations = try Self.schemaObjects(config.storePath.path)
        #expect(afterMigrations.contains("table finding_undo"))

        let logger = Logger(label: "iapguard.test", factory: { _ in SwiftLogNoOpLogHandler() })
        let pipeline = Pipeline(config: config, verifier: try JWSVerifier.make(for: config), logger: logger)
        // A full run, an incremental one (carried-over findings) and a re-run of the same window (a rewind).
        _ = try pipeline.run(Pipeline.Options(until: end - 3_600_000, failOn: nil))
        _ = try pipeline.run(Pipeline.Options(until: end, failOn: nil))
        _ = try pipeline.run(Pipeline.Options(until: end, failOn: nil))
        #expect(try Self.schemaObjects(config.storePath.path) == afterMigrations)
    }
}
