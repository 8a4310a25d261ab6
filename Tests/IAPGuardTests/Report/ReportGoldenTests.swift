import Foundation
import Testing

@testable import IAPGuard

/// The report for a fixed run must match the golden files byte for byte.
/// Regenerate after an intended change with `UPDATE_GOLDEN=1 swift test --skip-build --filter ReportGoldenTests`
/// and review the diff.
@Suite struct ReportGoldenTests {
    static let goldenFiles = [
        "42/report.html", "42/findings.csv", "42/evidence.csv", "42/summary.json", "index.html", "history.jsonl",
        "42/cases.csv",
    ]

    @Test func reportForTheStandardFixtureMatchesTheGoldenFiles() throws {
        let reports = try ReportTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: reports) }
        try ReportWriter(reportsDirectory: reports, options: ReportOptions()).write(ReportFixtures.standard())
        let update = ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1"
        for name in Self.goldenFiles {
            let actual = try Data(contentsOf: reports.appendingPathComponent(name))
            let golden = Fixtures.local("report/golden/" + name.replacingOccurrences(of: "/", with: "-"))
            if update {
                try actual.write(to: golden)
                continue
            }
            let expected = try Data(contentsOf: golden)
            #expect(actual == expected, "\(name) differs from \(golden.path); run with UPDATE_GOLDEN=1 if intended")
        }
    }

    @Test func goldenFindingsCSVParsesWithPythonAndKeepsTheDocumentedColumns() throws {
        let rows = try ReportTestSupport.pythonCSVRows(Fixtures.local("report/golden/42-findings.csv"))
        #expect(rows.first == ReportCSV.findingColumns)
        #expect(
            Array(rows.first?.prefix(19) ?? []) == [
                "finding_id", "run_id", "rule_id", "rule_version", "level", "status", "transaction_id",
                "original_transaction_id", "order_id", "user_id", "bundle_id", "product_id", "storefront", "amount",
                "currency", "amount_ref", "observed", "threshold", "summary",
            ])
        #expect(rows.count == 7)
        // Highest level and most money first within IAP-001.
        #expect(rows[1][2] == "IAP-001" && rows[1][4] == "critical")
        #expect(rows[2][13] == "0.99" && rows[2][15] == "1.98" && rows[2][14] == "USD")
        for row in rows { #expect(row.count == ReportCSV.findingColumns.count) }
    }
}
