import Foundation
import IAPGuard

/// Reports stage: 100k findings rendered to HTML and CSV (the HTML caps rows per rule and links to the CSV).
enum ReportsBenchmark {
    static let findingCount = 100_000

    static let ruleIDs = (1...20).map { String(format: "IAP-%03d", $0) }

    /// `count` synthetic findings over the 20 rule ids (3 evidence rows each), the same every time.
    static func syntheticFindings(_ count: Int) -> [Finding] {
        var findings: [Finding] = []
        findings.reserveCapacity(count)
        for index in 0..<count {
            let ruleID = ruleIDs[index % ruleIDs.count]
            let transaction = String(2_000_000_000_000_000 + index)
            var finding = Finding(
                findingID: RuleEngine.findingID(ruleID: ruleID, key: [transaction]), runID: 1, ruleID: ruleID,
                ruleVersion: "1.0", ruleTitle: "Rule \(ruleID)", level: Finding.Level.allCases[index % 5],
                status: index % 3 == 0 ? .recurring : .new, outcome: index % 17 == 0 ? .inconclusive : .hit,
                summary: "transaction \(transaction) credited 2 times to u-\(index % 9000)", firstSeenRunID: 1)
            finding.transactionID = transaction
            finding.userID = "u-\(String(format: "%06d", index % 9000))"
            finding.bundleID = "com.example.coins"
            finding.productID = "com.example.coins.pack100"
            finding.storefront = "USA"
            finding.amount = 990
            finding.currency = "USD"
            finding.amountRef = 990
            finding.observed = "2"
            finding.threshold = "2"
            finding.entityKey = [EvidenceField(name: "transaction_id", value: transaction)]
            finding.evidence = (0..<3).map { row in
                EvidenceRow(
                    kind: "credit",
                    fields: [
                        EvidenceField(name: "credit_id", value: "c-\(index)-\(row)"),
                        EvidenceField(name: "user_id", value: finding.userID),
                        EvidenceField(name: "credited_at", value: "1780000000000"),
                    ])
            }
            findings.append(finding)
        }
        return findings
    }

    static func run(_ options: BenchOptions) throws {
        Measure.header("reports", "\(findingCount) findings over 20 rules")
        let (findings, buildSeconds) = Measure.time { syntheticFindings(findingCount) }
        Measure.line(
            "reports", "build \(findingCount) synthetic findings (not counted)", String(format: "%8.2f s", buildSeconds)
        )
        let rules = ruleIDs.map {
            ReportInput.RuleDescription(
                id: $0, title: "Rule \($0)", version: "1.0", description: "benchmark rule", level: .high,
                status: "stable", runbook: nil, falsePositives: [])
        }
        let input = ReportInput(
            runID: 1, windowSince: nil, windowUntil: BenchWorld.now, startedAt: 0, finishedAt: 1,
            toolVersion: "bench", configHash: "bench", referenceCurrency: "USD", sources: [], findings: findings,
            rules: rules, ruleCounts: ruleIDs.map { .init(ruleID: $0, evaluated: nil) }, quarantine: [], history: [])
        let folder = options.directory.appendingPathComponent("reports-bench")
        try? FileManager.default.removeItem(at: folder)
        let writer = ReportWriter(reportsDirectory: folder)
        let (runFolder, seconds) = try Measure.time { try writer.write(input) }
        Measure.line(
            "reports", "ReportWriter.write, \(findingCount) findings",
            String(format: "%8.2f s  ", seconds) + Measure.rate(Double(findingCount), seconds) + " findings")
        let files = (try? FileManager.default.contentsOfDirectory(at: runFolder, includingPropertiesForKeys: nil)) ?? []
        for file in files.sorted(by: { $0.lastPathComponent < $1.lastPathComponent }) {
            let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
            var note = ""
            if file.pathExtension == "html", let text = try? String(contentsOf: file, encoding: .utf8) {
                note = "  \(text.components(separatedBy: "<tr").count - 1) table rows"
            }
            Measure.line(
                "reports", "  \(file.lastPathComponent)", String(format: "%9.1f KiB", Double(size) / 1024) + note)
        }
        Measure.line("reports", "peak RSS of this stage", Measure.mib(Measure.peakRSS()))
    }
}
