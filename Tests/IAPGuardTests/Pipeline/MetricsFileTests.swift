import Foundation
import Testing

@testable import IAPGuard

@Suite struct MetricsFileTests {
    static func summary() -> RunSummary {
        var summary = RunSummary(runID: 7, storePath: "/s")
        summary.startedAt = 1_000_000
        summary.finishedAt = 1_004_500
        var counts = WriteCounts()
        counts.records = 12
        counts.inserted = 10
        counts.errors = 2
        summary.sources = [
            .init(name: "ord\"ers\\x", kind: "orders", counts: counts, error: nil),
            .init(name: "asn2", kind: "notifications", counts: WriteCounts(), error: "missing file"),
        ]
        summary.stageSeconds = ["ingest": 1.5, "rules": 0.25]
        summary.activeHits = ["IAP-001": ["high": 3, "critical": 1]]
        var stats = RuleRunResult.RuleStats(ruleID: "IAP-001", ruleVersion: "1", ruleStatus: .stable)
        stats.hits = 4
        summary.ruleStats = [stats]
        return summary
    }

    @Test func rendersPrometheusTextWithEscapedLabelsAndOneTypeLinePerMetric() {
        let text = MetricsFile.render(summary: Self.summary(), exitCode: 2, now: 2_000_000, lastSuccess: 1_004_500)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.contains("iapguard_run_exit_code 2"))
        #expect(lines.contains("iapguard_last_success_timestamp_seconds 1004.5"))
        #expect(lines.contains("iapguard_run_duration_seconds 4.5"))
        #expect(lines.contains("iapguard_stage_duration_seconds{stage=\"ingest\"} 1.5"))
        #expect(lines.contains("iapguard_source_records{kind=\"orders\",source=\"ord\\\"ers\\\\x\"} 12"))
        #expect(lines.contains("iapguard_source_up{kind=\"notifications\",source=\"asn2\"} 0"))
        #expect(lines.contains("iapguard_findings_active{level=\"critical\",rule=\"IAP-001\"} 1"))
        #expect(lines.contains("iapguard_rule_hits{rule=\"IAP-001\"} 4"))
        let types = lines.filter { $0.hasPrefix("# TYPE ") }
        #expect(Set(types).count == types.count)
        for line in lines where !line.hasPrefix("#") {
            #expect(
                line.range(of: #"^[a-z_]+(\{[^}]*\})? -?[0-9.e+-]+$"#, options: .regularExpression) != nil, "\(line)")
        }
    }

    @Test func writesAtomicallyAndRemembersTheLastSuccessAcrossFailures() throws {
        let directory = TestScratch.root.appendingPathComponent("iapguard-m-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = MetricsFile(path: directory.appendingPathComponent("iapguard.prom"))
        #expect(file.previousLastSuccess() == nil)
        try file.write(MetricsFile.render(summary: Self.summary(), exitCode: 0, now: 5_000, lastSuccess: 4_000))
        #expect(file.previousLastSuccess() == 4_000)
        try file.write(
            MetricsFile.render(summary: nil, exitCode: 78, now: 9_000, lastSuccess: file.previousLastSuccess()))
        let text = try String(contentsOf: file.path, encoding: .utf8)
        #expect(text.contains("iapguard_run_exit_code 78\n"))
        #expect(text.contains("iapguard_last_success_timestamp_seconds 4\n"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["iapguard.prom"])
    }
}
