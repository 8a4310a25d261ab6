import Testing

@testable import IAPGuard

@Suite struct RunExitCodeTests {
    static func hit(
        _ rule: String, _ level: Finding.Level, status: Finding.Status = .new, outcome: Finding.Outcome = .hit
    ) -> Finding {
        Finding(
            findingID: rule + level.rawValue, runID: 1, ruleID: rule, ruleVersion: "1", ruleTitle: rule, level: level,
            status: status, outcome: outcome, summary: "s", firstSeenRunID: 1)
    }

    @Test func findingsAtOrAboveFailOnGiveCodeTwoOthersZero() {
        let findings = [Self.hit("IAP-001", .medium)]
        #expect(RunExitCode.forCompletedRun(findings: findings, failOn: .medium, experimentalRuleIDs: []) == .findings)
        #expect(RunExitCode.forCompletedRun(findings: findings, failOn: .high, experimentalRuleIDs: []) == .success)
        #expect(RunExitCode.forCompletedRun(findings: findings, failOn: nil, experimentalRuleIDs: []) == .success)
        #expect(RunExitCode.forCompletedRun(findings: [], failOn: .informational, experimentalRuleIDs: []) == .success)
        #expect(RunExitCode.findings.rawValue == 2)
    }

    @Test func experimentalSuppressedResolvedAndInconclusiveNeverFailTheRun() {
        var suppressed = Self.hit("IAP-001", .critical, status: .suppressed)
        suppressed.suppression = .init(owner: "o", reason: "r", expires: "2026-12-31")
        let findings = [
            Self.hit("IAP-008", .critical), suppressed, Self.hit("IAP-002", .critical, status: .resolved),
            Self.hit("IAP-003", .critical, outcome: .inconclusive),
        ]
        #expect(
            RunExitCode.forCompletedRun(findings: findings, failOn: .low, experimentalRuleIDs: ["IAP-008"]) == .success)
        #expect(RunExitCode.forCompletedRun(findings: findings, failOn: .low, experimentalRuleIDs: []) == .findings)
    }

    /// A damaged store file is an I/O failure (74) with a hint to restore it, whether the run's connection or
    /// a reader thread met it first; another failure of a reader's query stays an internal error.
    @Test func aDamagedStoreIsAnIOErrorWhereverItIsMet() {
        let corrupt = SQLiteError(code: 11, message: "database disk image is malformed", sql: "SELECT 1")
        #expect(RunExitCode(error: corrupt) == .ioError)
        #expect("\(corrupt)".contains("restore it from a backup"))
        let onReader = RuleQueryPrefetch.PrefetchError(description: "\(corrupt)", damagedStore: true)
        #expect(RunExitCode(error: onReader) == .ioError)
        #expect(RunExitCode(error: RuleQueryPrefetch.PrefetchError(description: "no such column: x")) == .internalError)
    }

    @Test func codesAreDistinctAndFailOnParses() {
        let values = RunExitCode.allCases.map(\.rawValue)
        #expect(Set(values).count == values.count)
        #expect(
            values.contains(64) && values.contains(65) && values.contains(69) && values.contains(75)
                && values.contains(78))
        #expect(RunExitCode.parseFailOn("HIGH") == .some(.high))
        #expect(RunExitCode.parseFailOn("none") == .some(nil))
        #expect(RunExitCode.parseFailOn("severe") == nil)
    }
}
