import Foundation
import Testing

@testable import IAPGuard

@Suite("Pipeline with the App Store Server API and ECB rates on loopback")
struct NetworkPipelineTests {
    @Test func aRunPullsVerifiesStoresAndTheRulesSeeThePulledData() throws {
        let world = try ApplePullerTests.populated()
        let ecb = try LoopbackHTTPServer { request in
            request.path == "/ecb.xml" ? .json(200, FXRateFetcherTests.xml) : .json(200, FXRateFetcherTests.extra)
        }
        defer { ecb.stop() }
        // The backend credited the five real transactions and one Apple never issued.
        let credits = (ApplePullerTests.credited + ["2999999999999999"]).enumerated().map { index, id in
            "{\"credit_id\": \"c\(index)\", \"transaction_id\": \"\(id)\", \"user_id\": \"u-\(index % 3)\", \"product_id\": \"\(NetworkTestWorld.product)\", \"units\": 600, \"credited_at\": \(NetworkTestWorld.t0 + 86_400_000 * Int64(index + 1) + 60_000)}"
        }
        try Data(credits.joined(separator: "\n").utf8).write(
            to: world.directory.appendingPathComponent("data/credits.jsonl"))
        let config = try world.config(
            environments: "[Production]",
            extra:
                "fx: {ecb_url: \"\(ecb.baseURL.appendingPathComponent("ecb.xml").absoluteString)\", extra_url: \"\(ecb.baseURL.appendingPathComponent("extra.csv").absoluteString)\"}",
            sources: ["{name: credits, kind: credits, format: jsonl, path: data/credits.jsonl}"])
        let pipeline = Pipeline(config: config, verifier: try world.verifier(config), logger: world.logger)
        let summary = try pipeline.run(Pipeline.Options(failOn: nil))
        #expect(summary.errors.isEmpty, "\(summary.errors)")
        #expect(summary.sources.map(\.name) == ["credits", "apple"])
        let apple = try #require(summary.sources.last)
        #expect(apple.kind == "app-store-api")
        #expect(apple.counts.inserted > 0)
        #expect(summary.verification["verified"] == 10)  // 5 credited + 5 from notifications

        let store = try SQLiteStore(path: config.storePath.path)
        let findings = try world.rows(
            store, "SELECT rule_id, transaction_id FROM findings WHERE rule_id IN ('IAP-015', 'IAP-020') ORDER BY 1, 2")
        #expect(
            findings == [
                ["IAP-015", "2000000000000002"], ["IAP-015", "2000000000000004"], ["IAP-020", "2999999999999999"],
            ])
        #expect(try world.rows(store, "SELECT COUNT(*) FROM fx_rates WHERE source IN ('ecb', 'fx-extra')") == [["5"]])
        let sourceRow = try world.rows(
            store, "SELECT source_kind, inserted FROM run_source WHERE source_name = 'apple'")
        #expect(sourceRow.first?.first == "app-store-api")
        // The report lists the API source beside the file sources, with what the store holds from it.
        let reportSummary = try JSONSerialization.jsonObject(
            with: Data(
                contentsOf: URL(fileURLWithPath: try #require(summary.reportFolder)).appendingPathComponent(
                    "summary.json")))
        let reportSources = try #require((reportSummary as? [String: Any])?["sources"] as? [[String: Any]])
        #expect(reportSources.compactMap { $0["name"] as? String } == ["credits", "apple"])
        let appleRow = try #require(reportSources.last)
        #expect(appleRow["kind"] as? String == "app-store-api")
        let sightings = try world.rows(
            store,
            "SELECT (SELECT COUNT(*) FROM apple_sighting WHERE source_name = 'apple') "
                + "+ (SELECT COUNT(*) FROM notification WHERE source_name = 'apple')")
        #expect((appleRow["stored_records"] as? Int).map(String.init) == sightings.first?.first)
        #expect((appleRow["stored_records"] as? Int ?? 0) > 0)

        // A second run pulls incrementally: nothing new, nothing duplicated.
        let before = try world.fingerprint(store)
        let again = try pipeline.run(Pipeline.Options(failOn: nil))
        #expect(again.errors.isEmpty)
        #expect(again.sources.last?.counts.inserted == 0)
        #expect(try world.fingerprint(store) == before)
        #expect(!world.logs.text.contains("BEGIN PRIVATE KEY"))
    }
}
