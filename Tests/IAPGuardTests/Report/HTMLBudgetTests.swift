import Foundation
import Testing

@testable import IAPGuard

/// The whole-page budget of `report.html`: many findings lower every bucket's cap to the same fair share.
@Suite struct HTMLBudgetTests {
    @Test func underBudgetTheCapIsTheLimit() {
        #expect(HTMLBudget.fairCap([3, 10, 50], limit: 200, budget: 4_000) == 200)
        #expect(HTMLBudget.fairCap([], limit: 200, budget: 1) == 200)
    }

    @Test func overBudgetEveryBucketGetsTheLargestCapThatFits() {
        // 10 + 2 × min(500, c) ≤ 210 → c = 100: the small bucket keeps its 10, the big ones give way.
        #expect(HTMLBudget.fairCap([10, 500, 500], limit: 200, budget: 210) == 100)
        #expect(HTMLBudget.fairCap([10, 500, 500], limit: 200, budget: 211) == 100)
        #expect(HTMLBudget.fairCap([10, 500, 500], limit: 200, budget: 212) == 101)
        // The cap never goes under one: a bucket always shows a hit, even past the budget.
        #expect(HTMLBudget.fairCap(Array(repeating: 5, count: 1_000), limit: 200, budget: 10) == 1)
    }

    static func section(_ rule: String, hits: Int, evidence: Int) -> ReportModel.RuleSection {
        var section = ReportModel.RuleSection(id: rule)
        section.active = ArraySlice(
            (0..<hits).map { n in
                var finding = ReportFixtures.finding(rule, n, level: .medium, summary: "hit \(n)")
                finding.evidence = (0..<evidence).map { row in
                    EvidenceRow(kind: "credit", fields: [EvidenceField(name: "row", value: "\(row)")])
                }
                return finding
            })
        return section
    }

    @Test func aHundredThousandFindingsStayWithinThePageBudget() {
        let sections = (1...20).map { Self.section(String(format: "IAP-%03d", $0), hits: 5_000, evidence: 3) }
        let budget = HTMLBudget(sections: sections, options: ReportOptions())
        #expect(budget.hitsPerBucket == 200)  // 20 × 200 = 4,000 hits: exactly the default budget
        #expect(budget.evidenceRowsPerHit == 50)  // 4,000 × 3 = 12,000 rows ≤ 20,000: the per-hit cap stays
        let smaller = HTMLBudget(
            sections: sections, options: ReportOptions(maxHTMLHits: 1_000, maxHTMLEvidenceRows: 1_500))
        #expect(smaller.hitsPerBucket == 50)
        #expect(smaller.evidenceRowsPerHit == 1)
    }

    @Test func theRenderedPageShowsTheBudgetedHitsAndPointsToTheCSVs() {
        let sections = [Self.section("IAP-001", hits: 40, evidence: 4), Self.section("IAP-002", hits: 5, evidence: 4)]
        let input = ReportInput(
            runID: 7, windowSince: nil, windowUntil: nil, startedAt: ReportFixtures.t0,
            finishedAt: ReportFixtures.t0 + 1_000, toolVersion: "test", configHash: "h", referenceCurrency: "EUR",
            sources: [], findings: sections.flatMap(\.active), rules: [], ruleCounts: [], quarantine: [],
            history: [])
        let model = ReportModel(input: input, options: ReportOptions(), fileHistory: [])
        // 5 + min(40, c) ≤ 25 → 20 hits of IAP-001; 25 hits × min(4, e) ≤ 50 → 2 evidence rows each.
        let options = ReportOptions(maxHTMLHits: 25, maxHTMLEvidenceRows: 50)
        let html = HTMLReportRenderer(model: model, options: options).render()
        #expect(html.components(separatedBy: "<details id=\"hit-").count - 1 == 20 + 5)
        #expect(html.contains("20 more not shown here"))
        #expect(html.contains("2 more evidence rows in <a href=\"evidence.csv\">"))
    }
}
