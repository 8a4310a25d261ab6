import Foundation
import Testing

@testable import IAPGuard

/// The run's counts (stdout, the `source ingested` log line) and the report's (store contents) each add up
/// and say which they are: a quarantined record is an error, not an inserted record.
@Suite struct RunCountsTests {
    @Test func aQuarantinedRecordIsCountedAsAnErrorNotAsInsertedAndSummaryJSONNamesStoreTotals() throws {
        let world = try IngestTestWorld()
        try world.write(
            "credits.jsonl",
            #"""
            {"credit_id":"c-1","user_id":"u-1","units":1,"credited_at":1767225600000,"transaction_id":"1"}
            {"credit_id":"c-2","user_id":"u-1","units":1,"credited_at":
            {"credit_id":"c-3","user_id":"u-1","units":1,"credited_at":1767225600000,"transaction_id":"3"}

            """#)
        let written = try world.config(sources: [
            "{name: credits, kind: credits, format: jsonl, path: data/credits.jsonl}"
        ])
        try FileManager.default.createDirectory(
            at: world.directory.appendingPathComponent("rules"), withIntermediateDirectories: true)
        let yaml = try String(contentsOf: written.file, encoding: .utf8)
        try Data(("rules: rules\n" + yaml).utf8).write(to: written.file)
        let config = try Config.load(from: written.file)
        let summary = try world.run(config)
        let counts = try #require(summary.sources.first?.counts)
        #expect(counts.records == 3 && counts.inserted == 2 && counts.errors == 1 && counts.unchanged == 0)
        #expect(counts.records == counts.inserted + counts.updated + counts.unchanged + counts.errors)
        #expect(try world.rows(config, "SELECT COUNT(*) FROM credits") == [["2"]])

        let folder = try #require(summary.reportFolder)
        let data = try Data(contentsOf: URL(fileURLWithPath: folder).appendingPathComponent("summary.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(json["schema_version"] as? Int == 2)
        let source = try #require((json["sources"] as? [[String: Any]])?.first)
        #expect(source["stored_records"] as? Int == 2 && source["stored_quarantined"] as? Int == 1)
        #expect(source["inserted"] == nil, "\(source)")
        // Schema 1's names stay, with the same stored counts.
        #expect(source["records"] as? Int == 2 && source["errors"] as? Int == 1, "\(source)")
    }
}
