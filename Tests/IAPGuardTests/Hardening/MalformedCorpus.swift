import Foundation
import Testing

@testable import IAPGuard
@testable import IAPGuardTesting

/// The malformed-input corpus (`Fixtures/malformed/`, manifest `cases.tsv`, written by `make-corpus.py`).
enum MalformedCorpus {
    /// One row of `cases.tsv`.
    struct Case: Sendable, CustomTestStringConvertible {
        var file: String
        var format: String
        var expect: String
        var reason: String
        var url: URL { Fixtures.local("malformed/\(file)") }
        var testDescription: String { file }
    }

    static let all: [Case] = {
        let url = Fixtures.local("malformed/cases.tsv")
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            if line.hasPrefix("#") { return nil }
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard columns.count == 4 else { return nil }
            return Case(file: columns[0], format: columns[1], expect: columns[2], reason: columns[3])
        }
    }()

    static func cases(_ formats: String...) -> [Case] { all.filter { formats.contains($0.format) } }

    /// The signing chain the good signed records use; the corpus verifier trusts its root.
    static let chain: TestSigningChain = {
        do {
            return try TestSigningChain.generate(options: .init(rootCurve: .p256, deterministicSeed: 8))
        } catch {
            fatalError("test chain: \(error)")
        }
    }()

    static func verifier() throws -> JWSVerifier {
        try JWSVerifier(
            trustedRootsDER: [chain.rootDER],
            policy: VerificationPolicy(apps: [
                .init(bundleID: "com.example.coins", appAppleID: 1_234_567, environments: [.production, .sandbox])
            ]))
    }

    static func json(_ object: [String: Any]) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
            return "{}"
        }
        return String(decoding: data, as: UTF8.self)
    }

    static func signedTransaction(_ id: String) throws -> String {
        try chain.sign(
            payload: Data(
                json([
                    "transactionId": id, "originalTransactionId": id, "bundleId": "com.example.coins",
                    "productId": "com.example.coins.pack6", "type": "Consumable", "quantity": 1,
                    "purchaseDate": 1_700_000_000_000, "signedDate": 1_700_000_000_000, "environment": "Production",
                    "storefront": "USA", "currency": "USD", "price": 4990, "inAppOwnershipType": "PURCHASED",
                ]).utf8))
    }

    /// Two good records of a JSON Lines or CSV row format (the CSV header first), and how to count them.
    static func goodRecords(_ format: String) throws -> (header: String?, records: [String], check: String) {
        switch format {
        case "receipts":
            let lines = ["1001", "1002"].map {
                #"{"status":0,"environment":"Production","receipt":{"bundle_id":"com.example.coins","in_app":[{"quantity":"1","product_id":"com.example.coins.pack6","transaction_id":"\#($0)","purchase_date_ms":"1000"}]}}"#
            }
            return (nil, lines, "SELECT COUNT(*) FROM transactions WHERE transaction_id IN ('1001', '1002')")
        case "signed":
            return (
                nil, [try signedTransaction("2001"), json(["signedTransactionInfo": try signedTransaction("2002")])],
                "SELECT COUNT(*) FROM transactions WHERE transaction_id IN ('2001', '2002') AND verification = 'verified'"
            )
        case "notifications":
            let lines = try ["3001", "3002"].map { id in
                let payload = json([
                    "notificationType": "ONE_TIME_CHARGE", "notificationUUID": "good-\(id)",
                    "signedDate": 1_700_000_000_000,
                    "data": [
                        "bundleId": "com.example.coins", "appAppleId": 1_234_567, "environment": "Production",
                        "signedTransactionInfo": try signedTransaction(id),
                    ],
                ])
                return json(["signedPayload": try chain.sign(payload: Data(payload.utf8))])
            }
            return (
                nil, lines,
                "SELECT COUNT(*) FROM notifications n JOIN transactions t USING (transaction_id) WHERE n.notification_uuid IN ('good-3001', 'good-3002') AND n.verification = 'verified' AND t.verification = 'verified'"
            )
        case "credits":
            return (
                nil,
                [
                    #"{"credit_id":"c-good-1","user_id":"u-1","units":1,"credited_at":1000}"#,
                    #"{"credit_id":"c-good-2","user_id":"u-2","units":"2","credited_at":"2026-01-01"}"#,
                ],
                "SELECT COUNT(*) FROM credits WHERE credit_id IN ('c-good-1', 'c-good-2')"
            )
        case "orders-jsonl":
            return (
                nil,
                [
                    #"{"order_id":"o-good-1","price":"0.99","created_at":1000}"#,
                    #"{"order_id":"o-good-2","quantity":2,"created_at":"2026-01-01"}"#,
                ],
                "SELECT COUNT(*) FROM orders WHERE order_id IN ('o-good-1', 'o-good-2')"
            )
        case "orders-csv":
            return (
                "order_id,user_id,product_id,price,currency,created_at",
                [
                    "o-good-1,u-1,com.example.coins.pack6,4.99,USD,2026-01-01T00:00:00Z",
                    "o-good-2,u-2,com.example.coins.pack6,0.99,EUR,1767225600000",
                ],
                "SELECT COUNT(*) FROM orders WHERE order_id IN ('o-good-1', 'o-good-2')"
            )
        case "credits-csv":
            return (
                "credit_id,transaction_id,user_id,units,credited_at",
                ["c-good-1,1,u-1,100,2026-01-01", "c-good-2,2,u-2,200,2026-01-02T10:00:00+02:00"],
                "SELECT COUNT(*) FROM credits WHERE credit_id IN ('c-good-1', 'c-good-2')"
            )
        default:
            throw RecordError("no good records for \(format)")
        }
    }

    /// The source kind, format and counting view of a corpus format.
    static func source(_ format: String) -> (kind: String, format: String, view: String) {
        switch format {
        case "receipts": return ("receipts", "jsonl", "transactions")
        case "signed": return ("signed-transactions", "jsonl", "transactions")
        case "notifications": return ("notifications", "jsonl", "notifications")
        case "credits": return ("credits", "jsonl", "credits")
        case "orders-jsonl": return ("orders", "jsonl", "orders")
        case "credits-csv", "source-credits-csv": return ("credits", "csv", "credits")
        case "source-orders-jsonl": return ("orders", "jsonl", "orders")
        case "sqlite", "sqlite-raw": return ("orders", "sqlite", "orders")
        default: return ("orders", "csv", "orders")
        }
    }
}

/// A temporary folder with one source file, ingested by ``SourceIngestor`` into a fresh store — the
/// ingest stage alone, without the rest of the pipeline.
struct CorpusIngest {
    let directory: URL
    let config: Config
    let store: SQLiteStore
    /// The source-level error, if the source failed as a whole.
    var sourceError: SourceError?
    /// The delivery as the pipeline judges it after the ingest.
    var health: SourceHealth

    /// Writes `bytes` as the source file `input.<ext>` and ingests it as `format` (a corpus format). For
    /// `sqlite`, `bytes` is the SQL script that builds the source database; for `sqlite-raw` the file itself.
    init(format: String, bytes: [UInt8], query: String? = nil) throws {
        directory = TestScratch.root.appendingPathComponent(
            "iapguard-corpus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let (kind, fileFormat, _) = MalformedCorpus.source(format)
        let name = fileFormat == "sqlite" ? "input.db" : "input.\(fileFormat)"
        if format != "sqlite" {
            try Data(bytes).write(to: directory.appendingPathComponent(name))
        }
        let queryYAML = query.map { ", query: '\($0.replacingOccurrences(of: "'", with: "''"))'" } ?? ""
        let yaml = """
            store: store.sqlite
            apps:
              - bundle_id: com.example.coins
                app_apple_id: 1234567
                environments: [Production, Sandbox]
            sources:
              - {name: src, kind: \(kind), format: \(fileFormat), path: \(name)\(queryYAML)}
            """
        config = try Config.parse(yaml, file: directory.appendingPathComponent("iapguard.yml"))
        health = SourceHealth(source: config.sources[0])
        if format == "sqlite" {
            let database = try SQLiteDatabase(path: directory.appendingPathComponent(name).path)
            try database.execute(String(decoding: bytes, as: UTF8.self))
        }
        store = try SQLiteStore(path: config.storePath.path)
        try store.migrate()
        let runID = try store.beginRun(
            RunStart(startedAt: 0, windowSince: nil, windowUntil: nil, configHash: "corpus", toolVersion: "test"))
        let ingestor = SourceIngestor(
            source: config.sources[0], verifier: try MalformedCorpus.verifier(), configHash: "corpus", batchSize: 3)
        let store = self.store
        var health = SourceHealth(source: config.sources[0])
        do {
            _ = try ingestor.ingest(
                store: store, runID: runID,
                sink: {
                    health.observe($0)
                    _ = try store.write($0, runID: runID)
                }, delivered: { health.delivered($0) })
        } catch let error as SourceError {
            sourceError = error
        }
        self.health = health
    }

    func count(_ sql: String) throws -> Int64 { try store.database.scalar(sql)?.integerValue ?? -1 }

    /// (location, reason, raw excerpt) of every quarantined record.
    func quarantine() throws -> [(location: String, reason: String, excerpt: String)] {
        try store.database.query("SELECT location, reason, raw_excerpt FROM quarantine ORDER BY quarantine_id").map {
            ($0[0].textValue ?? "", $0[1].textValue ?? "", $0[2].textValue ?? "")
        }
    }

    func remove() { try? FileManager.default.removeItem(at: directory) }
}
