import Foundation
import Testing

@testable import IAPGuard

/// A broken export must never look like a quiet day: through the real pipeline, a source that yields no
/// good record, mostly bad ones, lacks a column the rules need or delivers nothing is loud in the summary
/// and at the top of the report, and the run is `partial` (exit 69) when it is an error.
@Suite struct BrokenDeliveryTests {
    static let orderHeader = "order_id,user_id,product_id,price,currency,created_at,transaction_id"
    static let orderRows = [
        "o-1,u-1,com.example.coins.pack6,4.99,USD,2026-01-01T00:00:00Z,2000000000000001",
        "o-2,u-2,com.example.coins.pack6,4.99,USD,2026-01-02T00:00:00Z,2000000000000002",
    ]

    static func reportHTML(_ summary: RunSummary) throws -> String {
        guard let folder = summary.reportFolder else { return "" }
        return try String(
            contentsOf: URL(fileURLWithPath: folder).appendingPathComponent("report.html"), encoding: .utf8)
    }

    @Test func crOnlyJSONLinesIsASourceErrorShownAtTheTopOfTheReport() throws {
        let world = try IngestTestWorld()
        let lines = (1...3).map {
            #"{"order_id":"o-\#($0)","user_id":"u-1","price":"4.99","currency":"USD","created_at":1767225600000,"transaction_id":"200000000000000\#($0)"}"#
        }
        try world.write("orders.jsonl", lines.joined(separator: "\r") + "\r")
        let written = try world.config(sources: ["{name: orders, kind: orders, format: jsonl, path: data/orders.jsonl}"]
        )
        // With a rules folder (empty here) the run writes its report.
        try FileManager.default.createDirectory(
            at: world.directory.appendingPathComponent("rules"), withIntermediateDirectories: true)
        let yaml = try String(contentsOf: written.file, encoding: .utf8)
        try Data(("rules: rules\n" + yaml).utf8).write(to: written.file)
        let summary = try world.run(try Config.load(from: written.file))
        #expect(summary.status == "partial")
        #expect(
            summary.errors.contains { $0.hasPrefix("source orders: no good record: all 1 records were quarantined") })
        #expect(RunExitCode.sourceUnavailable.rawValue == 69)
        let html = try Self.reportHTML(summary)
        let top = html.range(of: "Source problems")?.lowerBound
        let summarySection = html.range(of: "id=\"summary\"")?.lowerBound
        #expect(top != nil && summarySection != nil && top! < summarySection!, "the problem is not at the top")
        #expect(html.contains("This run is partial"))
    }

    @Test func aDegradedSourceIsPartialUnlessTheColumnIsDeclaredAbsent() throws {
        let world = try IngestTestWorld()
        let header = "order_id,product_id,price,currency,created_at,transaction_id"
        let rows = Self.orderRows.map { $0.replacingOccurrences(of: #",u-\d"#, with: "", options: .regularExpression) }
        try world.write("orders.csv", ([header] + rows).joined(separator: "\n") + "\n")
        let degraded = try world.run(
            try world.config(sources: ["{name: orders, kind: orders, format: csv, path: data/orders.csv}"]))
        #expect(degraded.status == "partial")
        #expect(
            degraded.errors.contains { $0.contains("degraded source: no record has user_id") }, "\(degraded.errors)")
        let declared = try world.run(
            try world.config(sources: [
                "{name: orders, kind: orders, format: csv, path: data/orders.csv, absent_columns: [user_id]}"
            ]))
        #expect(declared.status == "ok", "\(declared.errors)")
    }

    /// A source whose very first delivery is a header without a record warns, as an empty file does: a
    /// first run must not be quietly green with a whole source missing.
    @Test func aHeaderOnlyFirstDeliveryWarns() throws {
        let world = try IngestTestWorld()
        try world.write("orders.csv", Self.orderHeader + "\n")
        let first = try world.run(
            try world.config(sources: ["{name: orders, kind: orders, format: csv, path: data/orders.csv}"]))
        #expect(first.warnings.contains { $0.contains("source orders: delivered 0 records (header only: orders.csv)") })
    }

    /// So does a first delivery of blank lines only (not an empty file, no header to tell).
    @Test func aBlankLinesOnlyFirstDeliveryWarns() throws {
        let world = try IngestTestWorld()
        try world.write("credits.jsonl", "\n\n   \n\n")
        let first = try world.run(
            try world.config(sources: ["{name: credits, kind: credits, format: jsonl, path: data/credits.jsonl}"]))
        #expect(
            first.warnings.contains {
                $0.contains("source credits: delivered 0 records (no record in: credits.jsonl)")
            },
            "\(first.warnings)")
    }

    @Test func anEmptyDeliveryWarnsAndMinRecordsMakesItAnError() throws {
        let world = try IngestTestWorld()
        try world.write("orders.csv", ([Self.orderHeader] + Self.orderRows).joined(separator: "\n") + "\n")
        let source = "{name: orders, kind: orders, format: csv, path: data/orders.csv}"
        let first = try world.run(try world.config(sources: [source]))
        #expect(first.status == "ok" && first.warnings.isEmpty, "\(first.errors) \(first.warnings)")
        // The next export has the header only: earlier runs had rows, so it is a warning.
        try world.write("orders.csv", Self.orderHeader + "\n")
        let headerOnly = try world.run(try world.config(sources: [source]))
        #expect(headerOnly.status == "ok")
        #expect(
            headerOnly.warnings.contains {
                $0.contains("source orders: delivered 0 records (header only: orders.csv; earlier runs had records)")
            })
        // A 0-byte file is always worth a warning; with min_records it is an error.
        try world.write("orders.csv", "")
        let empty = try world.run(try world.config(sources: [source]))
        #expect(empty.warnings.contains { $0.contains("delivered 0 records (empty file: orders.csv)") })
        try world.write("orders.csv", Self.orderHeader + "\n")
        let strict = try world.run(
            try world.config(sources: [
                "{name: orders, kind: orders, format: csv, path: data/orders.csv, min_records: 1}"
            ]))
        #expect(strict.status == "partial")
        #expect(strict.errors.contains { $0.contains("delivered 0 records, fewer than min_records (1)") })
    }

    @Test func theBadShareLimitIsConfigurable() throws {
        let world = try IngestTestWorld()
        let rows =
            Self.orderRows + ["o-3,u-3,p,free,USD,2026-01-03,3", "o-4,u-4,p,gratis,USD,2026-01-04,4"]
            + ["o-5,u-5,p,none,USD,2026-01-05,5"]
        try world.write("orders.csv", ([Self.orderHeader] + rows).joined(separator: "\n") + "\n")
        let strict = try world.run(
            try world.config(sources: ["{name: orders, kind: orders, format: csv, path: data/orders.csv}"]))
        #expect(strict.errors.contains { $0.contains("3 of 5 records (60 %) were quarantined, above the 50 % limit") })
        let lenient = try world.run(
            try world.config(sources: [
                "{name: orders, kind: orders, format: csv, path: data/orders.csv, max_bad_share: 0.8}"
            ]))
        #expect(lenient.status == "ok", "\(lenient.errors)")
    }

    @Test func aBadFXRowIsQuarantinedTheRunGoesOnAndAConflictNamesBothLines() throws {
        let world = try IngestTestWorld()
        try world.write("orders.csv", ([Self.orderHeader] + Self.orderRows).joined(separator: "\n") + "\n")
        try world.write(
            "rates.csv", "date,currency,per_eur\n2026-01-01,USD,1.1\n2026-01-05,USD,one\n2026-01-02,GBP,0.8\n")
        let config = try world.config(sources: ["{name: orders, kind: orders, format: csv, path: data/orders.csv}"])
        let yaml = try String(contentsOf: config.file, encoding: .utf8)
        try Data(("fx_rates: data/rates.csv\n" + yaml).utf8).write(to: config.file)
        let summary = try world.run(try Config.load(from: config.file))
        #expect(summary.status == "ok", "\(summary.errors)")
        #expect(
            summary.warnings.contains {
                $0.contains(#"rates.csv:3: per_eur: expected a positive rate, found "one""#)
                    && $0.contains("no rate for USD on 2026-01-05")
            },
            "\(summary.warnings)")
        #expect(try world.rows(config, "SELECT COUNT(*) FROM fx_rates") == [["2"]])
        #expect(
            try world.rows(config, "SELECT location FROM quarantine WHERE source_name = 'fx_rates'") == [
                ["rates.csv:3"]
            ])

        try world.write(
            "rates.csv", "date,currency,per_eur\n2026-01-01,USD,1.1\n2026-01-02,GBP,0.8\n2026-01-01,USD,1.3\n")
        let conflict = try world.run(try Config.load(from: config.file))
        #expect(conflict.status == "partial")
        #expect(
            conflict.errors.contains {
                $0.contains("rates.csv:2 and :4 give USD on 2026-01-01 two rates (1.1 and 1.3)")
            },
            "\(conflict.errors)")
        #expect(try world.rows(config, "SELECT currency FROM fx_rates") == [["GBP"]])
    }

    @Test func sqliteTextThatIsNotUTF8IsQuarantinedNotRepaired() throws {
        let script = """
            CREATE TABLE orders (id TEXT, user_id TEXT, price TEXT, created_at TEXT);
            INSERT INTO orders VALUES ('o-1', 'u-1', '4.99', '2026-01-01');
            INSERT INTO orders VALUES ('o-2', CAST(x'752dff' AS TEXT), '4.99', '2026-01-01');
            """
        let ingest = try CorpusIngest(
            format: "sqlite", bytes: Array(script.utf8),
            query: "SELECT id AS order_id, user_id, price, created_at FROM orders ORDER BY id")
        defer { ingest.remove() }
        #expect(try ingest.count("SELECT COUNT(*) FROM orders") == 1)
        let quarantine = try ingest.quarantine()
        #expect(quarantine.map(\.location) == ["input.db:row 2"])
        #expect(
            quarantine.first?.reason == "user_id: invalid UTF-8 or a NUL byte in the database's text", "\(quarantine)")
    }
}

/// A source path that is a folder with no file in it delivers nothing, as a 0-byte file does: it warns on
/// every run (the first one too), and `min_records` makes it an error.
@Suite struct EmptySourceFolderTests {
    @Test func anEmptySourceFolderWarnsAsAnEmptyFileDoes() throws {
        let world = try IngestTestWorld()
        let folder = world.directory.appendingPathComponent("data/orders")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let first = try world.run(
            try world.config(sources: ["{name: orders, kind: orders, format: csv, path: data/orders}"]))
        #expect(first.status == "ok")
        #expect(
            first.warnings == ["source orders: delivered 0 records (the folder holds no file: \(folder.path))"],
            "\(first.warnings)")
        let strict = try world.run(
            try world.config(sources: ["{name: orders, kind: orders, format: csv, path: data/orders, min_records: 1}"]))
        #expect(strict.errors.contains { $0.contains("delivered 0 records, fewer than min_records (1)") })
        // A folder whose only file is unchanged since the last run is not empty.
        try Data("order_id,user_id,created_at\no-1,u-1,1767225600000\n".utf8).write(
            to: folder.appendingPathComponent("a.csv"))
        let source = ["{name: orders, kind: orders, format: csv, path: data/orders}"]
        _ = try world.run(try world.config(sources: source))
        let unchanged = try world.run(try world.config(sources: source))
        #expect(unchanged.warnings.isEmpty, "\(unchanged.warnings)")
    }
}

/// `max_bad_share` counts input lines: a good notification line gives two records (the notification and its
/// transaction) but is one delivery, as a bad line is one quarantined record.
@Suite struct BadShareByLineTests {
    @Test func aNotificationFileWithMostLinesBadIsASourceErrorThoughItsGoodLinesGiveTwoRecordsEach() {
        let source = Config.Source(
            name: "notifications", kind: .notifications, format: .jsonl, path: URL(fileURLWithPath: "/n"), query: nil)
        var health = SourceHealth(source: source)
        var batch = IngestBatch()
        for line in 1...3 {
            var notification = AppleNotification(notificationUUID: "n-\(line)")
            notification.sourceRef = "n.jsonl:\(line)"
            batch.notifications.append(notification)
            batch.sightings.append(
                AppleSighting(
                    transaction: AppleTransaction(transactionID: "\(line)"), sourceKind: .notification,
                    sourceName: "notifications", sourceRef: "n.jsonl:\(line)", payloadHash: "h", verification: .verified
                ))
        }
        batch.quarantined = (4...7).map {
            QuarantinedRecord(
                sourceName: "notifications", location: "n.jsonl:\($0)", reason: "bad", rawExcerpt: "", rawHash: "\($0)")
        }
        health.observe(batch)
        let errors = health.verdict(hadEarlierRecords: false).errors
        #expect(errors.count == 1 && errors[0].hasPrefix("4 of 7 records (57 %) were quarantined"), "\(errors)")
    }
}
