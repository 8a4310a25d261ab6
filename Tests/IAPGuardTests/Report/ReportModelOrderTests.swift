import Testing

@testable import IAPGuard

/// The model sorts the handed-over findings in place; each rule's buckets are slices of that one array.
@Suite struct ReportModelOrderTests {
    @Test func bucketsAreConsecutiveSlicesOfTheOrderedFindingsInOutputOrder() {
        let statuses: [(Finding.Status, Finding.Outcome)] = [
            (.new, .hit), (.recurring, .hit), (.new, .inconclusive), (.suppressed, .hit), (.resolved, .hit),
        ]
        // Shuffled input across two rules, every bucket, three levels.
        var findings: [Finding] = []
        for n in 0..<60 {
            let (status, outcome) = statuses[n % statuses.count]
            let level: Finding.Level = [.low, .high, .critical][n % 3]
            var finding = ReportFixtures.finding(
                n % 2 == 0 ? "IAP-002" : "IAP-001", n, level: level, status: status, outcome: outcome,
                summary: "finding \(n)")
            finding.amountRef = Int64((n * 7_919) % 5_000)
            findings.append(finding)
        }
        findings.shuffle()
        let input = ReportInput(
            runID: 42, windowSince: nil, windowUntil: nil, startedAt: ReportFixtures.t0,
            finishedAt: ReportFixtures.t0 + 1_000, toolVersion: "test", configHash: "h", referenceCurrency: "EUR",
            sources: [], findings: findings, rules: [], ruleCounts: [], quarantine: [], history: [])
        let model = ReportModel(input: input, options: ReportOptions(), fileHistory: [])

        #expect(model.findings.count == findings.count)
        #expect(model.input.findings.isEmpty)  // held once, by the model
        // The buckets, in section order, are the ordered findings back to back.
        var next = model.findings.startIndex
        for section in model.sections {
            for bucket in [section.active, section.inconclusive, section.suppressed, section.resolved] {
                #expect(bucket.startIndex == next)
                next = bucket.endIndex
                #expect(bucket.allSatisfy { $0.ruleID == section.id })
                // Within a bucket: level, then money at risk, then finding id.
                #expect(zip(bucket, bucket.dropFirst()).allSatisfy { !ReportModel.hitOrder($1, $0) })
            }
        }
        #expect(next == model.findings.endIndex)
        #expect(model.sections.map(\.id) == ["IAP-001", "IAP-002"])
        #expect(model.sections.allSatisfy { !$0.active.isEmpty && !$0.resolved.isEmpty })
    }
}

/// Money at risk is what active findings an analyst acts on put at risk.
@Suite struct ReportMoneyTests {
    @Test func informationalFindingsPutNoMoneyAtRisk() {
        var refused = ReportFixtures.finding("IAP-004", 1, level: .informational, summary: "refused, not credited")
        refused.amountRef = 2_517
        var credited = ReportFixtures.finding("IAP-001", 2, level: .high, summary: "credited twice")
        credited.amountRef = 9_990
        let input = ReportInput(
            runID: 42, windowSince: nil, windowUntil: nil, startedAt: ReportFixtures.t0,
            finishedAt: ReportFixtures.t0 + 1_000, toolVersion: "test", configHash: "h", referenceCurrency: "USD",
            sources: [], findings: [refused, credited], rules: [], ruleCounts: [], quarantine: [], history: [])
        let model = ReportModel(input: input, options: ReportOptions(), fileHistory: [])
        #expect(model.moneyAtRisk == 9_990)
        #expect(model.sections.first { $0.id == "IAP-004" }?.moneyAtRisk == 0)
    }
}
