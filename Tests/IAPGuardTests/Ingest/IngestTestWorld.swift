import Foundation
import Logging

@testable import IAPGuard

/// A temporary folder with a config and input files, run through the real pipeline.
struct IngestTestWorld {
    let directory: URL

    init() throws {
        directory = TestScratch.root.appendingPathComponent("iapguard-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("data"), withIntermediateDirectories: true)
    }

    func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: directory.appendingPathComponent("data/\(name)"))
    }

    func write(_ name: String, bytes: [UInt8]) throws {
        try Data(bytes).write(to: directory.appendingPathComponent("data/\(name)"))
    }

    func copyFixture(_ fixture: String, as name: String) throws {
        try FileManager.default.copyItem(
            at: Fixtures.local(fixture), to: directory.appendingPathComponent("data/\(name)"))
    }

    /// Writes a config with the given `sources:` YAML lines and returns it loaded.
    func config(sources: [String], environments: String = "[Production, Sandbox]") throws -> Config {
        let yaml = """
            store: state/store.sqlite
            apps:
              - bundle_id: com.example.coins
                environments: \(environments)
                products:
                  - {product_id: com.example.coins.pack6, type: Consumable, units: 600, price: "4.99", currency: USD}
              - bundle_id: com.example
                environments: [Sandbox]
            sources:
            \(sources.map { "  - \($0)" }.joined(separator: "\n"))
            """
        let url = directory.appendingPathComponent("iapguard.yml")
        try Data(yaml.utf8).write(to: url)
        return try Config.load(from: url)
    }

    /// Writes a config with the shipped rules, one app selling `product` (a consumable of `units` units at
    /// `price` USD), and the `receipts` and `credits` sources (`data/receipts.jsonl`, `data/credits.jsonl`).
    func receiptsAndCreditsConfig(product: String, units: Int, price: String) throws -> Config {
        let yaml = """
            store: state/store.sqlite
            rules: \(Fixtures.repoRoot.appendingPathComponent("rules").path)
            apps:
              - bundle_id: com.example.coins
                environments: [Production, Sandbox]
                products:
                  - {product_id: \(product), type: Consumable, units: \(units), price: "\(price)", currency: USD}
            sources:
              - {name: receipts, kind: receipts, format: jsonl, path: data/receipts.jsonl}
              - {name: credits, kind: credits, format: jsonl, path: data/credits.jsonl}
            """
        let url = directory.appendingPathComponent("iapguard.yml")
        try Data(yaml.utf8).write(to: url)
        return try Config.load(from: url)
    }

    func run(_ config: Config, verifier: any AppleRecordVerifier = UncheckedVerifier()) throws -> RunSummary {
        try Pipeline(config: config, verifier: verifier, logger: Logger(label: "test")).run()
    }

    func store(_ config: Config) throws -> SQLiteStore { try SQLiteStore(path: config.storePath.path) }

    /// All rows of a query, as text.
    func rows(_ config: Config, _ sql: String) throws -> [[String?]] {
        try store(config).database.query(sql).map { $0.map(\.textValue) }
    }

    /// A fingerprint of everything stored (all rows of every private table except run bookkeeping).
    func fingerprint(_ config: Config) throws -> [String] {
        let db = try store(config).database
        var out: [String] = []
        for table in [
            "apple_sighting", "apple_transaction", "backend_order", "credit", "notification", "quarantine",
            "change_log",
        ] {
            // A quarantined record's `seen_run_id` is the last run that read it: bookkeeping, like file states.
            let columns =
                table == "quarantine"
                ? "quarantine_id, run_id, source_name, location, reason, raw_excerpt, raw_hash" : "*"
            let rows = try db.query("SELECT \(columns) FROM \(table) ORDER BY 1")
            out.append("\(table): " + rows.map { $0.map(\.description).joined(separator: "|") }.joined(separator: "\n"))
        }
        return out
    }
}
