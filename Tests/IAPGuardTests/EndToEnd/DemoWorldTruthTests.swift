import Foundation
import Logging
import Testing

@testable import IAPGuard
@testable import IAPGuardSampleWorld

/// Runs the whole job on a generated world and holds its findings against the world's `truth.jsonl`:
/// every injected pattern is flagged (at the expected level where the truth names one), no benign
/// look-alike is flagged above what the truth allows, and nothing above informational is left unexplained.
@Suite(.serialized) struct DemoWorldTruthTests {
    static let levels = ["informational", "low", "medium", "high", "critical"]

    struct Row: Sendable {
        var ruleID: String
        var level: String
        var transactionID: String?
        var originalTransactionID: String?
        var orderID: String?
        var userID: String?
    }

    /// A generated world run once through the pipeline, shared by the tests of this suite.
    struct RunWorld: Sendable {
        var directory: URL
        var truth: [[String: String]]
        var findings: [Row]
        var firstRun: RunSummary
        var secondRun: RunSummary
        var laterRun: RunSummary

        static let shared: Result<RunWorld, any Error> = Result { try make() }

        static func make() throws -> RunWorld {
            // Tests/IAPGuardTests/EndToEnd/<this file> → the repository root.
            var root = URL(fileURLWithPath: #filePath)
            for _ in 0..<4 { root.deleteLastPathComponent() }
            let directory = TestScratch.root
                .appendingPathComponent("iapguard-truth-\(ProcessInfo.processInfo.processIdentifier)")
            try? FileManager.default.removeItem(at: directory)
            let end = WorldGenerator.defaultEnd
            _ = try WorldGenerator(
                options: .init(
                    seed: 3, users: 600, days: 30, end: end, rulesPath: root.appendingPathComponent("rules").path)
            ).write(to: directory)
            let config = try Config.load(from: directory.appendingPathComponent("iapguard.yml"))
            let logger = Logger(label: "iapguard.test", factory: { _ in SwiftLogNoOpLogHandler() })
            let pipeline = Pipeline(config: config, verifier: try JWSVerifier.make(for: config), logger: logger)
            let first = try pipeline.run(Pipeline.Options(until: end, failOn: nil))
            let second = try pipeline.run(Pipeline.Options(until: end, failOn: nil))
            let later = try pipeline.run(Pipeline.Options(until: end + 60_000, failOn: nil))

            let store = try SQLiteStore(path: config.storePath.path, readOnly: true)
            var rows: [Row] = []
            for v in try store.database.query(
                """
                SELECT rule_id, level, transaction_id, original_transaction_id, order_id, user_id FROM findings
                WHERE outcome = 'hit' AND status IN ('new', 'recurring')
                """)
            {
                rows.append(
                    Row(
                        ruleID: v[0].textValue ?? "", level: v[1].textValue ?? "", transactionID: v[2].textValue,
                        originalTransactionID: v[3].textValue, orderID: v[4].textValue, userID: v[5].textValue))
            }
            let truth = try String(contentsOf: directory.appendingPathComponent("truth.jsonl"), encoding: .utf8)
                .split(separator: "\n").map {
                    try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
                        .compactMapValues { $0 as? String }
                }
            return RunWorld(
                directory: directory, truth: truth, findings: rows, firstRun: first, secondRun: second,
                laterRun: later)
        }
    }

    /// Whether a finding is about the entity a truth line names: the same transaction, original
    /// transaction or order; or the same user for findings that are about a user, not a transaction.
    static func matches(_ truth: [String: String], _ row: Row) -> Bool {
        guard truth["rule_id"] == row.ruleID else { return false }
        let pairs: [(String, String?)] = [
            ("transaction_id", row.transactionID), ("original_transaction_id", row.originalTransactionID),
            ("order_id", row.orderID),
        ]
        for (key, value) in pairs {
            if let expected = truth[key], let value, expected == value { return true }
        }
        if let user = truth["user_id"], row.transactionID == nil, row.userID == user { return true }
        return false
    }

    static func rank(_ level: String) -> Int { levels.firstIndex(of: level) ?? -1 }

    @Test func everyInjectedPatternIsFlaggedAtTheExpectedLevel() throws {
        let world = try RunWorld.shared.get()
        let hits = world.truth.filter { $0["expect"] == "hit" }
        #expect(hits.count > 60)
        for line in hits {
            let level = line["level"]
            let found = world.findings.contains { Self.matches(line, $0) && (level == nil || $0.level == level) }
            #expect(found, "not flagged: \(line["rule_id"] ?? "") \(line["pattern"] ?? "") \(line["note"] ?? "")")
        }
    }

    @Test func noBenignLookAlikeIsFlaggedAboveWhatItsTruthAllows() throws {
        let world = try RunWorld.shared.get()
        let benign = world.truth.filter { $0["expect"] == "no-hit" }
        #expect(benign.count > 20)
        for line in benign {
            let ceiling = line["max_level"].map(Self.rank) ?? -1
            let flagged = world.findings.filter { Self.matches(line, $0) && Self.rank($0.level) > ceiling }
            #expect(
                flagged.isEmpty,
                "look-alike flagged: \(line["rule_id"] ?? "") \(line["pattern"] ?? "") \(line["note"] ?? "")")
        }
    }

    @Test func everyFindingAboveInformationalIsExplainedByAnInjectedPattern() throws {
        let world = try RunWorld.shared.get()
        let hits = world.truth.filter { $0["expect"] == "hit" }
        let unexplained = world.findings.filter { row in
            row.level != "informational" && !hits.contains { Self.matches($0, row) }
        }
        #expect(
            unexplained.isEmpty,
            "unexplained: \(unexplained.prefix(5).map { "\($0.ruleID) \($0.transactionID ?? $0.userID ?? "")" })")
    }

    @Test func theRunSummaryCountsHitsForEveryRule() throws {
        let world = try RunWorld.shared.get()
        let stats = world.firstRun.ruleStats
        #expect(stats.map(\.ruleID) == (1...20).map { String(format: "IAP-%03d", $0) })
        #expect(stats.allSatisfy { $0.hits > 0 && $0.error == nil })
        #expect(stats.allSatisfy { $0.new == $0.hits && $0.recurring == 0 })
        #expect(world.firstRun.text().contains("IAP-020"))
    }

    @Test func reRunningTheSameWindowGivesTheSameFindingsAndALaterWindowSeesThemAsRecurring() throws {
        let world = try RunWorld.shared.get()
        // The same window again replaces the first run's judgement: the same hits, still new.
        #expect(world.secondRun.ruleStats.map(\.hits) == world.firstRun.ruleStats.map(\.hits))
        #expect(world.secondRun.ruleStats.map(\.new) == world.firstRun.ruleStats.map(\.new))
        #expect(world.secondRun.sources.allSatisfy { $0.counts.inserted == 0 })
        // A minute later nothing new arrived: every hit is recurring, none resolved.
        #expect(world.laterRun.ruleStats.map(\.hits) == world.firstRun.ruleStats.map(\.hits))
        #expect(world.laterRun.ruleStats.allSatisfy { $0.new == 0 && $0.recurring == $0.hits && $0.resolved == 0 })
    }
}
