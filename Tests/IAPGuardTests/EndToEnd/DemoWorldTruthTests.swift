import Foundation
import Testing

@testable import IAPGuard
@testable import IAPGuardSampleWorld

/// Runs the whole job on a generated world and holds its findings against the world's `truth.jsonl`:
/// every injected pattern is flagged (at the expected level where the truth names one), no benign
/// look-alike is flagged above what the truth allows, and nothing above informational is left unexplained.
@Suite(.serialized) struct DemoWorldTruthTests {
    static let levels = ["informational", "low", "medium", "high", "critical"]

    typealias Row = TruthWorld.Row

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
            let world = try TruthWorld(name: "iapguard-truth", seed: 3, users: 600, days: 30)
            let end = world.end
            let first = try world.pipeline.run(Pipeline.Options(until: end, failOn: nil))
            let second = try world.pipeline.run(Pipeline.Options(until: end, failOn: nil))
            let later = try world.pipeline.run(Pipeline.Options(until: end + 60_000, failOn: nil))
            return RunWorld(
                directory: world.directory, truth: try world.truth(), findings: try world.hitRows(), firstRun: first,
                secondRun: second, laterRun: later)
        }
    }

    /// Whether a finding of the truth line's rule is about the entity it names.
    static func matches(_ truth: [String: String], _ row: Row) -> Bool {
        truth["rule_id"] == row.ruleID && TruthWorld.sameEntity(truth, row)
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

    /// The generator writes what a healthy backend and Apple send (free trials with an order price of 0
    /// among them); a record of it in the quarantine is the data contract refusing valid data, shown to the
    /// analyst as a broken export.
    @Test func aGeneratedWorldHasNoRecordTheDataContractRefuses() throws {
        let world = try RunWorld.shared.get()
        #expect(world.firstRun.quarantined == 0)
        #expect(world.firstRun.errors.isEmpty)
    }

    @Test func theRunSummaryCountsHitsForEveryRule() throws {
        let world = try RunWorld.shared.get()
        let stats = world.firstRun.ruleStats
        #expect(stats.map(\.ruleID) == (1...22).map { String(format: "IAP-%03d", $0) })
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
