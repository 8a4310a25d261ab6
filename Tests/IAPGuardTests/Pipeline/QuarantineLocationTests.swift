import Foundation
import Testing

@testable import IAPGuard

/// An operator finds the bad lines from the run's own outputs: the report's quarantine table and
/// `summary.json` show the first `file:line` of each reason (bounded), and the log names the first few.
@Suite struct QuarantineLocationTests {
    @Test func theFirstLocationsOfEachReasonAreInSummaryJSONAndTheReportBounded() throws {
        let world = try IngestTestWorld()
        var lines = (1...12).map {
            #"{"credit_id":"c-\#($0)","user_id":"u-1","units":1,"credited_at":1767225600000,"transaction_id":"\#($0)"}"#
        }
        for index in [2, 4, 6, 8] { lines[index] = #"{"credit_id":"bad","# }
        lines[10] = #"{"credit_id":"c-x","user_id":"u-1","units":0,"credited_at":1767225600000}"#
        try world.write("credits.jsonl", lines.joined(separator: "\n") + "\n")
        let written = try world.config(sources: [
            "{name: credits, kind: credits, format: jsonl, path: data/credits.jsonl}"
        ])
        try FileManager.default.createDirectory(
            at: world.directory.appendingPathComponent("rules"), withIntermediateDirectories: true)
        let yaml = try String(contentsOf: written.file, encoding: .utf8)
        try Data(("rules: rules\n" + yaml).utf8).write(to: written.file)
        let summary = try world.run(try Config.load(from: written.file))
        let folder = URL(fileURLWithPath: try #require(summary.reportFolder))

        let data = try Data(contentsOf: folder.appendingPathComponent("summary.json"))
        let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let quarantine = try #require(json["quarantine"] as? [[String: Any]])
        let byReason = Dictionary(
            uniqueKeysWithValues: quarantine.map { (($0["reason"] as? String) ?? "", $0["locations"] as? [String]) })
        #expect(quarantine.count == 2, "\(quarantine)")
        let malformed = try #require(byReason.first { $0.key.hasPrefix("malformed JSON") }?.value)
        #expect(malformed == ["credits.jsonl:3", "credits.jsonl:5", "credits.jsonl:7"])
        #expect(byReason.first { $0.key.hasPrefix("units: 0") }?.value == ["credits.jsonl:11"])

        let html = try String(contentsOf: folder.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(html.contains("First records"))
        #expect(html.contains("<bdi>credits.jsonl:3</bdi>, <bdi>credits.jsonl:5</bdi>, <bdi>credits.jsonl:7</bdi>, …"))
    }

    @Test func theLogNamesTheFirstFiveBadRecordsOfASource() {
        var health = SourceHealth(
            source: Config.Source(
                name: "c", kind: .credits, format: .jsonl, path: URL(fileURLWithPath: "/x"), query: nil))
        for chunk in [0..<3, 3..<9] {
            var batch = IngestBatch()
            batch.quarantined = chunk.map {
                QuarantinedRecord(sourceName: "c", location: "c.jsonl:\($0)", reason: "r", rawExcerpt: "", rawHash: "")
            }
            health.observe(batch)
        }
        #expect(health.firstBadRecords == (0..<5).map { "c.jsonl:\($0): r" })
    }
}
