import Foundation
import Testing

@testable import IAPGuard

/// Notifications that fail verification are kept and never acted on; `summary.json` counts the ones the store
/// holds, by source and reason, as it counts quarantined records, so a machine reading it sees them.
@Suite struct FailedNotificationCountTests {
    @Test func summaryJSONCountsStoredNotificationsThatFailedVerification() throws {
        let world = try IngestTestWorld()
        let chain = MalformedCorpus.chain
        let noData = MalformedCorpus.json([
            "notificationType": "DID_RENEW", "notificationUUID": "n-nodata", "signedDate": 1_700_000_100_000,
        ])
        try world.write(
            "notifications.jsonl",
            MalformedCorpus.json(["signedPayload": try chain.sign(payload: Data(noData.utf8))]) + "\n")
        let written = try world.config(sources: [
            "{name: asn2, kind: notifications, format: jsonl, path: data/notifications.jsonl}"
        ])
        try FileManager.default.createDirectory(
            at: world.directory.appendingPathComponent("rules"), withIntermediateDirectories: true)
        let yaml = try String(contentsOf: written.file, encoding: .utf8)
        try Data(("rules: rules\n" + yaml).utf8).write(to: written.file)
        let config = try Config.load(from: written.file)

        func failedNotifications(_ summary: RunSummary) throws -> [[String: Any]]? {
            let folder = URL(fileURLWithPath: try #require(summary.reportFolder))
            let data = try Data(contentsOf: folder.appendingPathComponent("summary.json"))
            let json = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            return json["failed_notifications"] as? [[String: Any]]
        }
        let first = try world.run(config, verifier: try MalformedCorpus.verifier())
        let counts = try #require(try failedNotifications(first))
        #expect(counts.count == 1, "\(counts)")
        #expect(counts.first?["source"] as? String == "asn2")
        #expect(counts.first?["reason"] as? String == "incomplete")
        #expect(counts.first?["count"] as? Int == 1)
        // What the store holds: a re-run that reads nothing new says the same.
        let second = try world.run(config, verifier: try MalformedCorpus.verifier())
        #expect(try failedNotifications(second)?.count == 1)
    }
}
