import Foundation
import Testing

@testable import IAPGuard

/// Carried-over findings are persisted set-based; the rows must be those of writing each finding again, and
/// a rewind must restore the state before the run.
@Suite struct CarriedFindingTests {
    static let until1 = TimeParser.epochMillis("2026-10-01T00:00:00Z") ?? -1
    static let until2 = TimeParser.epochMillis("2026-10-02T00:00:00Z") ?? -1

    static func finding(_ id: String, status: Finding.Status, runID: Int64, firstSeen: Int64) -> Finding {
        var finding = Finding(
            findingID: id, runID: runID, ruleID: "IAP-001", ruleVersion: "1", ruleTitle: "Duplicate credit",
            level: .high, status: status, outcome: .hit, summary: "summary of \(id)", firstSeenRunID: firstSeen)
        finding.transactionID = "t-\(id)"
        finding.amount = 199
        finding.currency = "USD"
        finding.observed = "2"
        finding.entityKey = [EvidenceField(name: "transaction_id", value: "t-\(id)")]
        finding.evidence = [
            EvidenceRow(kind: "hit", fields: [EvidenceField(name: "credits", value: "2")]),
            EvidenceRow(kind: "credit", fields: [EvidenceField(name: "note", value: "a/b \"quoted\"")]),
        ]
        if status == .suppressed {
            finding.suppression = Finding.Suppression(owner: "ops", reason: "known", expires: "2030-01-01")
        }
        return finding
    }

    /// A store with run 1 (findings Fa new, Fb suppressed, Fc new) and run 2 begun.
    static func store() throws -> (SQLiteStore, Int64) {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        let run1 = try store.beginRun(
            RunStart(startedAt: 0, windowSince: nil, windowUntil: until1, configHash: "h", toolVersion: "t"))
        try store.saveFindings(
            RuleRunResult(findings: [
                finding("Fa", status: .new, runID: run1, firstSeen: run1),
                finding("Fb", status: .suppressed, runID: run1, firstSeen: run1),
                finding("Fc", status: .new, runID: run1, firstSeen: run1),
            ]), runID: run1)
        try store.finishRun(run1, status: "ok", finishedAt: 1, summaryJSON: nil)
        let run2 = try store.beginRun(
            RunStart(startedAt: 2, windowSince: nil, windowUntil: until2, configHash: "h", toolVersion: "t"))
        return (store, run2)
    }

    /// Run 2: Fa and Fb carried over, Fc seen again, Fd new.
    static func run2Result(_ run2: Int64, carried: Bool) -> RuleRunResult {
        var a = finding("Fa", status: .recurring, runID: run2, firstSeen: 1)
        a.runID = run2
        var result = RuleRunResult(findings: [
            a, finding("Fb", status: .suppressed, runID: run2, firstSeen: 1),
            finding("Fc", status: .recurring, runID: run2, firstSeen: 1),
            finding("Fd", status: .new, runID: run2, firstSeen: run2),
        ])
        if carried { result.carriedFindingIDs = ["Fa", "Fb"] }
        return result
    }

    static func dump(_ store: SQLiteStore, _ sql: String) throws -> [String] {
        try store.connection.query(sql, []).map { row in row.map { $0.textValue ?? "NULL" }.joined(separator: "|") }
    }

    static let findingSQL = "SELECT * FROM finding ORDER BY finding_id"
    static let historySQL = "SELECT * FROM finding_run ORDER BY run_id, finding_id"

    @Test func carriedFindingsAreStoredAsIfEachWereWrittenAgain() throws {
        let (setBased, run2) = try Self.store()
        let (perFinding, sameRun) = try Self.store()
        #expect(run2 == sameRun)
        try setBased.saveFindings(Self.run2Result(run2, carried: true), runID: run2)
        try perFinding.saveFindings(Self.run2Result(run2, carried: false), runID: run2)
        #expect(try Self.dump(setBased, Self.findingSQL) == Self.dump(perFinding, Self.findingSQL))
        #expect(try Self.dump(setBased, Self.historySQL) == Self.dump(perFinding, Self.historySQL))
        let statuses = try Self.dump(setBased, "SELECT finding_id, status, last_run_id FROM finding ORDER BY 1")
        #expect(
            statuses == ["Fa|recurring|\(run2)", "Fb|suppressed|\(run2)", "Fc|recurring|\(run2)", "Fd|new|\(run2)"])
        #expect(try Self.dump(setBased, "SELECT COUNT(*) FROM finding_run WHERE run_id = \(run2)") == ["4"])
    }

    @Test func aRunThatCarriedFindingsIsRewoundToTheStateBeforeIt() throws {
        let (store, run2) = try Self.store()
        let before = try Self.dump(store, Self.findingSQL)
        let historyBefore = try Self.dump(store, Self.historySQL)
        let rewind = FindingRewind(database: store.connection)
        let result = Self.run2Result(run2, carried: true)
        let carried = Set(result.carriedFindingIDs)
        try rewind.remember(
            findingIDs: result.findings.map(\.findingID).filter { !carried.contains($0) }, runID: run2)
        try store.stageCarriedFindings(result.carriedFindingIDs)
        try rewind.rememberCarried(runID: run2)
        try store.saveFindings(result, runID: run2)
        try store.finishRun(run2, status: "ok", finishedAt: 3, summaryJSON: nil)
        #expect(try Self.dump(store, "SELECT COUNT(*) FROM finding_undo_carry WHERE run_id = \(run2)") == ["2"])
        #expect(try Self.dump(store, "SELECT COUNT(*) FROM finding_undo WHERE run_id = \(run2)") == ["2"])
        #expect(try Self.dump(store, Self.findingSQL) != before)

        let run3 = try store.beginRun(
            RunStart(startedAt: 4, windowSince: nil, windowUntil: Self.until2, configHash: "h", toolVersion: "t"))
        let rewound = try rewind.rewind(runsEndingAtOrAfter: Self.until2, currentRunID: run3)
        #expect(rewound == [run2])
        #expect(try Self.dump(store, Self.findingSQL) == before)
        #expect(try Self.dump(store, Self.historySQL) == historyBefore)
        #expect(try Self.dump(store, "SELECT COUNT(*) FROM finding_undo_carry") == ["0"])
    }
}
