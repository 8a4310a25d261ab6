import Foundation

@testable import IAPGuard

/// Fixed report inputs for the report tests: a realistic run and a hostile one.
enum ReportFixtures {
    static let day: Int64 = 86_400_000
    static let t0: Int64 = 1_767_225_600_000  // 2026-01-01T00:00:00Z

    static func finding(
        _ rule: String, _ n: Int, level: Finding.Level, status: Finding.Status = .new,
        outcome: Finding.Outcome = .hit, runID: Int64 = 42, summary: String
    ) -> Finding {
        var f = Finding(
            findingID: Hashing.sha256Hex("\(rule)|\(n)").prefix(16).description, runID: runID, ruleID: rule,
            ruleVersion: "1", ruleTitle: rule, level: level, status: status, outcome: outcome, summary: summary,
            firstSeenRunID: status == .new ? runID : runID - 2)
        f.transactionID = String(2_000_000_512_345_600 + n)
        f.originalTransactionID = f.transactionID
        f.bundleID = "com.example.coins"
        f.productID = "com.example.coins.pack100"
        return f
    }

    static func rules() -> [ReportInput.RuleDescription] {
        [
            .init(
                id: "IAP-001", title: "Duplicate credit", version: "1",
                description:
                    "The same transaction id was credited more than once and the extra credits were not reversed.",
                level: .high, status: "stable", runbook: "https://wiki.example.com/runbooks/iap-001",
                falsePositives: ["Rolled-back retries recorded without reversed_at"]),
            .init(
                id: "IAP-008", title: "Currency arbitrage", version: "2",
                description:
                    "FX-normalised price paid is below half the reference price and the storefront differs from the user's country.",
                level: .medium, status: "experimental", runbook: nil, falsePositives: []),
            .init(
                id: "IAP-014", title: "Missing credit", version: "1",
                description: "A verified production purchase was never credited after the grace period.",
                level: .medium, status: "stable", runbook: "Open a support case and credit the user.",
                falsePositives: []),
        ]
    }

    /// A run with active, inconclusive, suppressed and resolved findings, history and quarantine.
    static func standard() -> ReportInput {
        var a = finding("IAP-001", 1, level: .high, summary: "Transaction credited 3 times to u-1042.")
        a.userID = "u-1042"
        a.orderID = "o-88121"
        a.storefront = "USA"
        a.amount = 990
        a.currency = "USD"
        a.amountRef = 1980
        a.observed = "3 credits"
        a.threshold = "1 credit"
        a.evidence = [
            EvidenceRow(
                kind: "transaction",
                fields: [
                    .init(name: "transaction_id", value: a.transactionID),
                    .init(name: "purchase_date", value: String(t0 + 3_600_000)),
                    .init(name: "price", value: "0.99"), .init(name: "currency", value: "USD"),
                ]),
            EvidenceRow(
                kind: "credit",
                fields: [
                    .init(name: "credit_id", value: "c-1"), .init(name: "user_id", value: "u-1042"),
                    .init(name: "credited_at", value: String(t0 + 3_700_000)), .init(name: "reversed_at", value: nil),
                ]),
            EvidenceRow(
                kind: "credit",
                fields: [
                    .init(name: "credit_id", value: "c-2"), .init(name: "user_id", value: "u-1042"),
                    .init(name: "credited_at", value: String(t0 + 3_800_000)), .init(name: "reversed_at", value: nil),
                ]),
        ]
        var b = finding("IAP-001", 2, level: .critical, status: .recurring, summary: "Transaction credited 5 times.")
        b.userID = "u-7"
        b.storefront = "TUR"
        b.amount = 49_990
        b.currency = "TRY"
        b.amountRef = 1_450
        b.observed = "5 credits"
        b.threshold = "1 credit"
        var c = finding(
            "IAP-008", 3, level: .medium,
            summary: "Paid 0.31 of the reference price in storefront TUR; user country DEU.")
        c.userID = "u-9"
        c.storefront = "TUR"
        c.amount = 32_990
        c.currency = "TRY"
        c.amountRef = 690
        c.observed = "0.31"
        c.threshold = "< 0.5"
        var d = finding(
            "IAP-008", 4, level: .medium, outcome: .inconclusive, summary: "No FX rate for the purchase date.")
        d.inconclusiveReason = "no FX rate for ARS on 2026-01-01"
        d.storefront = "ARG"
        var e = finding("IAP-014", 5, level: .medium, status: .suppressed, summary: "Purchase not credited after 24 h.")
        e.suppression = Finding.Suppression(
            owner: "risk@example.com", reason: "Known outage 2026-01-01", expires: "2026-03-31")
        e.amountRef = 990
        var g = finding("IAP-014", 6, level: .medium, status: .resolved, summary: "Purchase was credited late.")
        g.userID = "u-3"
        return ReportInput(
            runID: 42, windowSince: t0 - 7 * day, windowUntil: t0 + day, startedAt: t0 + day + 60_000,
            finishedAt: t0 + day + 95_000, toolVersion: "0.1.0", configHash: "3f9a0c1d2e", referenceCurrency: "USD",
            sources: [
                .init(
                    name: "signed", kind: "signed-transactions", records: 120, inserted: 100, updated: 5, unchanged: 14,
                    errors: 1, watermark: "transactions.jsonl:121"),
                .init(
                    name: "credits", kind: "credits", records: 80, inserted: 80, updated: 0, unchanged: 0, errors: 0,
                    watermark: nil),
            ],
            findings: [g, e, d, c, b, a], rules: rules(),
            ruleCounts: [
                .init(ruleID: "IAP-001", evaluated: 120), .init(ruleID: "IAP-008", evaluated: 40),
                .init(ruleID: "IAP-014", evaluated: 120),
            ],
            quarantine: [.init(sourceName: "signed", reason: "signature does not verify", count: 1)],
            history: [
                RunHistoryEntry(
                    runID: 40, finishedAt: t0 - day, countsByLevel: ["high": 1], hitsByRule: ["IAP-001": 1],
                    moneyAtRisk: 990, referenceCurrency: "USD"),
                RunHistoryEntry(
                    runID: 41, finishedAt: t0, countsByLevel: ["critical": 1, "medium": 2],
                    hitsByRule: ["IAP-001": 1, "IAP-008": 2], moneyAtRisk: 3_000, referenceCurrency: "USD"),
            ],
            priceRatios: [0.31, 0.95, 1.0, 1.02, 0.48, 1.7, 2.4].map { .init(storefront: "TUR", ratio: $0) },
            cases: CaseStage.cases(of: [g, e, d, c, b, a]))
    }

    /// Strings an attacker can put in receipts, usernames and order notes.
    static let hostileStrings: [String] = [
        "<script>alert(1)</script>",
        "\"><img src=x onerror=alert(1)>",
        "'><svg onload=alert(1)>",
        "javascript:alert(document.cookie)",
        "=HYPERLINK(\"http://x\")",
        "+cmd|' /C calc'!A0",
        "@SUM(1)",
        "-2+3",
        "\tTAB",
        "\rCR",
        "evil\u{202E}gpj.exe",
        "bad \u{FFFD} utf8 \u{FFFD}",
        "</textarea></style></title><plaintext>",
        "line1\nline2, \"quoted\"",
        "＝1+1",
        String(repeating: "A", count: 10_240),
    ]

    /// Every attacker-controlled field filled with hostile strings.
    static func hostile() -> ReportInput {
        var findings: [Finding] = []
        for (i, s) in hostileStrings.enumerated() {
            var f = finding("IAP-007", i, level: i % 2 == 0 ? .critical : .high, summary: s)
            f.transactionID = s
            f.originalTransactionID = s
            f.orderID = s
            f.userID = s
            f.bundleID = s
            f.productID = s
            f.storefront = s
            f.currency = s
            f.amount = Int64(i) * 1000 + 990
            f.amountRef = Int64(i) * 1000 + 990
            f.observed = s
            f.threshold = s
            f.evidence = [
                EvidenceRow(
                    kind: s,
                    fields: [
                        .init(name: s, value: s), .init(name: "user_id", value: s), .init(name: "note", value: s),
                        .init(name: "purchase_date", value: s),
                    ])
            ]
            findings.append(f)
        }
        var inconclusive = finding("IAP-007", 100, level: .low, outcome: .inconclusive, summary: hostileStrings[1])
        inconclusive.inconclusiveReason = hostileStrings[0]
        findings.append(inconclusive)
        var suppressed = finding("IAP-007", 101, level: .low, status: .suppressed, summary: hostileStrings[4])
        suppressed.suppression = Finding.Suppression(
            owner: hostileStrings[1], reason: hostileStrings[0], expires: hostileStrings[10])
        findings.append(suppressed)
        return ReportInput(
            runID: 7, windowSince: nil, windowUntil: nil, startedAt: t0, finishedAt: t0 + 1000,
            toolVersion: hostileStrings[0], configHash: hostileStrings[1], referenceCurrency: "USD",
            sources: [
                .init(
                    name: hostileStrings[0], kind: hostileStrings[3], records: 1, inserted: 1, updated: 0, unchanged: 0,
                    errors: 0, watermark: hostileStrings[1])
            ],
            findings: findings,
            rules: [
                .init(
                    id: "IAP-007", title: hostileStrings[0], version: "1",
                    description: hostileStrings[1] + hostileStrings[15],
                    level: .critical, status: "stable", runbook: hostileStrings[3], falsePositives: [hostileStrings[2]])
            ],
            ruleCounts: [.init(ruleID: "IAP-007", evaluated: 16, error: nil)],
            quarantine: [.init(sourceName: hostileStrings[0], reason: hostileStrings[1], count: 2)],
            history: [], priceRatios: nil, cases: CaseStage.cases(of: findings))
    }
}
