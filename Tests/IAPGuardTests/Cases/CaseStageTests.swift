import Foundation
import Testing

@testable import IAPGuard

/// The case stage over a store: ids stay when findings join, and the triage state follows the rules of
/// `docs/operations.md` (a decision stays while the same findings recur, re-opens when a new one joins;
/// a case whose findings all resolve is resolved by the job).
@Suite(.serialized) struct CaseStageTests {
    final class World {
        let store: SQLiteStore
        var run: Int64 = 0
        var active: [String: Finding] = [:]

        init(_ name: String) throws {
            let path = TestScratch.root.appendingPathComponent("cases-\(name)-\(UUID().uuidString).sqlite").path
            store = try SQLiteStore(path: path)
            try store.migrate()
        }

        /// One run in which exactly `findings` are active (the others resolve); returns the stage's outcome.
        @discardableResult
        func runWith(_ findings: [Finding]) throws -> CaseStage.Outcome {
            run += 1
            let id = try store.beginRun(
                RunStart(
                    startedAt: run, windowSince: nil, windowUntil: 1_000_000 * run, configHash: "h",
                    toolVersion: "t"))
            var all: [Finding] = []
            for var f in findings {
                f.runID = id
                f.status = active[f.findingID] == nil ? .new : .recurring
                all.append(f)
            }
            let current = Set(findings.map(\.findingID))
            for (findingID, earlier) in active where !current.contains(findingID) {
                var resolved = earlier
                resolved.status = .resolved
                resolved.runID = id
                all.append(resolved)
            }
            try store.saveFindings(RuleRunResult(findings: all), runID: id)
            active = Dictionary(uniqueKeysWithValues: findings.map { ($0.findingID, $0) })
            return try CaseStage(connection: store.connection).run(runID: id, at: 1000 * run)
        }

        func cases() throws -> [IncidentCase] { try CaseReader(connection: store.connection).list() }

        func caseOf(_ findingID: String) throws -> IncidentCase? {
            let all =
                try CaseReader(connection: store.connection).list(CaseReader.Filter())
                + CaseReader(connection: store.connection).list(CaseReader.Filter(status: .resolved))
            return all.first { $0.findingIDs.contains(findingID) }
        }
    }

    static func finding(
        _ id: String, _ rule: String, tx: String?, user: String?, level: Finding.Level = .high, amount: Int64? = 9_990,
        credit: String? = nil
    ) -> Finding {
        var f = Finding(
            findingID: id, runID: 0, ruleID: rule, ruleVersion: "1", ruleTitle: rule, level: level, status: .new,
            outcome: .hit, summary: "\(rule) on \(tx ?? user ?? "?")", firstSeenRunID: 1)
        f.transactionID = tx
        f.userID = user
        f.amountRef = amount
        f.entityKey = [EvidenceField(name: credit == nil ? "transaction_id" : "credit_id", value: credit ?? tx)]
        return f
    }

    @Test func aNewFindingJoinsTheExistingCaseWhichKeepsItsIdAndCountsMoneyOnce() throws {
        let world = try World("join")
        let a = Self.finding("F-A", "IAP-011", tx: "2000000000000005", user: "u-b", credit: "c-5")
        try world.runWith([a])
        let before = try #require(try world.caseOf("F-A"))
        // A second rule flags the same transaction (a larger amount), and a smaller transaction id links in.
        let b = Self.finding("F-B", "IAP-012", tx: "2000000000000005", user: "u-b", amount: 12_000, credit: "c-5")
        var c = Self.finding("F-C", "IAP-013", tx: "2000000000000001", user: "u-a", credit: "c-5")
        c.level = .critical
        try world.runWith([a, b, c])
        let after = try #require(try world.caseOf("F-C"))
        #expect(after.caseID == before.caseID)
        #expect(after.findingIDs == ["F-A", "F-B", "F-C"])
        #expect(after.level == .critical)
        // Two transactions: 12.000 (the larger of two amounts on one transaction) and 9.990.
        #expect(after.moneyAtRisk == 21_990)
        #expect(try world.cases().count == 1)
    }

    @Test func aFalsePositiveStaysClosedWhileTheSameFindingsRecurAndReopensWhenANewOneJoins() throws {
        let world = try World("fp")
        let a = Self.finding("F-A", "IAP-001", tx: "2000000000000007", user: "u-1")
        try world.runWith([a])
        let opened = try #require(try world.caseOf("F-A"))
        try CaseTriage(connection: world.store.connection).setStatus(
            opened.caseID, to: .falsePositive, by: "alice", note: "known tester", at: 5)
        try world.runWith([a])
        try world.runWith([a])
        #expect(try world.caseOf("F-A")?.status == .falsePositive)
        #expect(try world.caseOf("F-A")?.statusBy == "alice")
        // A new finding on the same transaction joins: the case re-opens, and says why.
        let b = Self.finding("F-B", "IAP-015", tx: "2000000000000007", user: "u-1")
        let outcome = try world.runWith([a, b])
        let reopened = try #require(outcome.cases.first { $0.caseID == opened.caseID })
        #expect(reopened.status == .open)
        #expect(reopened.reopenedThisRun)
        let history = try CaseReader(connection: world.store.connection).history(of: opened.caseID)
        #expect(history.map(\.to) == [.open, .falsePositive, .open])
        #expect(history.last?.note?.contains("F-B") == true)
        #expect(history[1].by == "alice" && history[1].note == "known tester")
    }

    @Test func aCaseWhoseFindingsAllResolveIsResolvedByTheJobAndReopensWhenTheyReturn() throws {
        let world = try World("resolve")
        let a = Self.finding("F-A", "IAP-015", tx: "2000000000000008", user: "u-1")
        let other = Self.finding("F-O", "IAP-014", tx: "2000000000000099", user: "u-9")
        try world.runWith([a, other])
        let id = try #require(try world.caseOf("F-A")).caseID
        let outcome = try world.runWith([other])
        #expect(outcome.resolved == 1)
        let closed = try #require(outcome.cases.first { $0.caseID == id })
        #expect(closed.status == .resolved && closed.statusBy == CaseStage.jobName)
        #expect(try world.cases().allSatisfy { $0.caseID != id })
        try world.runWith([a, other])
        let back = try #require(try world.caseOf("F-A"))
        #expect(back.caseID == id && back.status == .open)
    }

    /// A resolved case puts nothing at risk any more, and one that re-opens for a new finding keeps the age
    /// of its first finding.
    @Test func aResolvedCaseHoldsNoMoneyAndARepenedOneKeepsItsAge() throws {
        let world = try World("age")
        let a = Self.finding("F-A", "IAP-015", tx: "2000000000000008", user: "u-1")
        let other = Self.finding("F-O", "IAP-014", tx: "2000000000000099", user: "u-9")
        try world.runWith([a, other])
        let opened = try #require(try world.caseOf("F-A"))
        let outcome = try world.runWith([other])
        let closed = try #require(outcome.cases.first { $0.caseID == opened.caseID })
        #expect(closed.status == .resolved && closed.moneyAtRisk == 0)
        // A new finding on the same transaction, two runs later.
        try world.runWith([other])
        var b = Self.finding("F-B", "IAP-001", tx: "2000000000000008", user: "u-1")
        b.firstSeenRunID = world.run + 1  // first seen in the run about to start, as the rule stage sets it
        try world.runWith([b, other])
        let back = try #require(try world.caseOf("F-B"))
        #expect(back.caseID == opened.caseID && back.status == .open)
        #expect(back.firstSeenRunID == opened.firstSeenRunID)
        #expect(back.firstSeenAt == opened.firstSeenAt)
        #expect(back.moneyAtRisk == 9_990)
    }

    @Test func aJobChangeBasedOnAStaleStateLeavesTheAnalystsNewerStateAndHistoryAlone() throws {
        let world = try World("race")
        try world.runWith([Self.finding("F-A", "IAP-015", tx: "2000000000000003", user: "u-1")])
        let id = try #require(try world.caseOf("F-A")).caseID
        try CaseTriage(connection: world.store.connection).setStatus(
            id, to: .confirmedFraud, by: "carol", note: nil, at: 9)
        // The job read `open` before carol's change and now wants to resolve the case.
        let event: [SQLValue] = [
            .text(id), .integer(10), .integer(2), .text(CaseStage.jobName), .text("open"), .text("resolved"),
            .text("resolved: every finding of the case resolved"),
        ]
        let change: [SQLValue] = [
            .text("resolved"), .text(CaseStage.jobName), .integer(10), .text("resolved"), .text(id), .text("open"),
        ]
        try CaseStage(connection: world.store.connection).write(
            cases: [], membership: [], events: [event], statusChanges: [(change, 0)])
        #expect(try CaseReader(connection: world.store.connection).find(id).status == .confirmedFraud)
        #expect(
            try CaseReader(connection: world.store.connection).history(of: id).map(\.to) == [.open, .confirmedFraud])
    }

    @Test func anAnalystsDecisionIsNotOverwrittenAndUnknownCasesAreReported() throws {
        let world = try World("triage")
        try world.runWith([Self.finding("F-A", "IAP-004", tx: "2000000000000002", user: "u-1")])
        let id = try #require(try world.caseOf("F-A")).caseID
        let triage = CaseTriage(connection: world.store.connection)
        try triage.setStatus(id, to: .investigating, by: "bob", note: nil, at: 7)
        try triage.setStatus(id, to: .confirmedFraud, by: "bob", note: "chargeback filed", at: 8)
        try world.runWith([Self.finding("F-A", "IAP-004", tx: "2000000000000002", user: "u-1")])
        #expect(try world.caseOf("F-A")?.status == .confirmedFraud)
        #expect(throws: CaseError.notFound("C-000000000000")) {
            try triage.setStatus("C-000000000000", to: .resolved, by: "bob", note: nil, at: 9)
        }
        #expect(throws: CaseError.self) { try triage.setStatus(id, to: .resolved, by: " ", note: nil, at: 9) }
        #expect(throws: CaseError.self) { try triage.setStatus(id, to: .resolved, by: "iapguard", note: nil, at: 9) }
        // History is only appended to.
        #expect(try CaseReader(connection: world.store.connection).history(of: id).count == 3)
    }
}
