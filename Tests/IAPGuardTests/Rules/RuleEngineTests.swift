import Foundation
import Testing

@testable import IAPGuard

@Suite("Rules")
struct RuleEngineTests {
    static let rulesFolder = Fixtures.repoRoot.appendingPathComponent("rules")
    static let day: Int64 = 86_400_000
    static let now: Int64 = 1_772_323_200_000  // 2026-03-01

    /// A small rule over credits: one finding per user with a standing credit.
    static func creditRule(exceptions: [RuleException] = []) throws -> Rule {
        try RuleParser(file: "inline.yaml").parse(
            """
            id: T-001
            title: credited users
            description: every user with a standing credit of at least min_units
            version: "1"
            status: stable
            level: low
            params: {min_units: 1}
            query: |
              SELECT user_id, SUM(units) AS observed, :min_units AS threshold
              FROM credits WHERE reversed_at IS NULL GROUP BY user_id HAVING SUM(units) >= :min_units
            entity_key: [user_id]
            runbook: none
            """
        )
        .withExceptions(exceptions)
    }

    static func store(credits: [(String, String, Int64)]) throws -> SQLiteStore {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        var loader = RuleFixtureLoader(database: store.database)
        try loader.insert(
            view: "credits",
            rows: credits.map {
                RuleTest.FixtureRow(values: ["credit_id": .text($0.0), "user_id": .text($0.1), "units": .integer($0.2)])
            })
        return store
    }

    @Test func everyShippedRuleLoadsAndValidates() throws {
        let (rules, errors) = RuleSet.load(from: Self.rulesFolder)
        #expect(errors.isEmpty, "\(errors)")
        #expect(rules.count == 22)
        #expect(rules.map(\.id) == (1...22).map { String(format: "IAP-%03d", $0) })
        let issues = try RuleValidator().validate(rules, now: Self.now)
        #expect(issues.filter { $0.severity == .error }.isEmpty, "\(issues)")
        #expect(rules.allSatisfy { !$0.tests.isEmpty && !$0.runbook.isEmpty })
    }

    @Test func everyInlineTestOfEveryShippedRulePasses() throws {
        let (rules, _) = RuleSet.load(from: Self.rulesFolder)
        let results = RuleTester().run(rules)
        #expect(results.count >= 20)
        for result in results where !result.passed { Issue.record("\(result)") }
    }

    @Test func aWrongExpectationFailsItsInlineTest() throws {
        let (rules, _) = RuleSet.load(from: Self.rulesFolder)
        var rule = try #require(rules.first { $0.id == "IAP-001" })
        var test = try #require(rule.tests.first)
        test.hits = [RuleTest.Expectation(fields: ["transaction_id": "2000000000000002"])]
        rule.tests = [test]
        let result = RuleTester().run(test, of: rule)
        #expect(!result.passed)
        #expect(result.failures.contains { $0.contains("expected hit") })
        #expect(result.failures.contains { $0.contains("unexpected hits") })
    }

    @Test func aRunLoadsTheSameRulesWithoutTheirInlineTests() throws {
        let (full, fullErrors) = RuleSet.load(from: Self.rulesFolder)
        let (run, runErrors) = RuleSet.load(from: Self.rulesFolder, includingTests: false)
        #expect(fullErrors.isEmpty && runErrors.isEmpty)
        #expect(run.allSatisfy { $0.tests.isEmpty })
        let withoutTests = full.map { rule -> Rule in
            var copy = rule
            copy.tests = []
            return copy
        }
        #expect(run == withoutTests)
    }

    @Test func plainScalarsAreTypedAsYAMLTypesThemAndQuotedOnesStayText() throws {
        let rule = try RuleParser(file: "inline.yaml").parse(
            """
            id: T-002
            title: typing
            description: every scalar type a parameter can take
            version: "1"
            status: stable
            level: low
            params: {int: 42, negative: -7, real: 2.5, yes_flag: true, off_flag: off, nothing: null, tilde: ~,
                     text: failed, quoted_int: "42", single: '2.5', time: 2026-01-10, hex: 0x1F, octal: 017}
            query: SELECT 1 AS k
            entity_key: [k]
            runbook: none
            """
        )
        let values = Dictionary(uniqueKeysWithValues: rule.params.map { ($0.name, $0.defaultValue) })
        #expect(values["int"] == .integer(42))
        #expect(values["negative"] == .integer(-7))
        #expect(values["real"] == .real(2.5))
        #expect(values["yes_flag"] == .integer(1))
        #expect(values["off_flag"] == .integer(0))
        #expect(values["nothing"] == .null)
        #expect(values["tilde"] == .null)
        #expect(values["text"] == .text("failed"))
        #expect(values["quoted_int"] == .text("42"))
        #expect(values["single"] == .text("2.5"))
        #expect(values["time"] == .text("2026-01-10"))
        #expect(values["hex"] == .integer(31))
        #expect(values["octal"] == .integer(15))
    }

    @Test func malformedRuleFileGivesFileAndLineAndOthersStillLoadAndRun() throws {
        let folder = Fixtures.local("rules/malformed")
        let (rules, errors) = RuleSet.load(from: folder)
        #expect(rules.map(\.id) == ["IAP-001"])
        #expect(errors.count == 2)
        let yamlError = try #require(errors.first { $0.file.hasSuffix("IAP-900-broken.yaml") })
        #expect(yamlError.line >= 6 && yamlError.line <= 8, "\(yamlError)")
        let levelError = try #require(errors.first { $0.file.hasSuffix("IAP-901-bad-level.yaml") })
        #expect(levelError.line == 6)
        #expect(levelError.message.contains("bad level"))
        #expect(levelError.description.contains("IAP-901-bad-level.yaml:6"))
        let results = RuleTester().run(rules)
        #expect(!results.isEmpty)
        #expect(results.filter { !$0.passed }.isEmpty)
    }

    @Test func validatorRejectsPrivateTablesUnknownParamsAndNonPortableFunctions() throws {
        let rule = try RuleParser(file: "bad.yaml").parse(
            """
            id: T-BAD
            title: bad
            description: bad
            version: "1"
            status: stable
            level: low
            query: |
              SELECT credit_id, strftime('%Y', credited_at) AS y FROM credit WHERE units > :nope
            entity_key: [credit_id, missing_column]
            exceptions:
              - {match: {user_id: u-1}, owner: qa, reason: old, expires: 2020-01-01}
            """)
        let issues = try RuleValidator().validate([rule], now: Self.now)
        let text = issues.map(\.description).joined(separator: "\n")
        #expect(text.contains("unknown parameter :nope"))
        #expect(text.contains("'credit', a private table"))
        #expect(text.contains("strftime()"))
        #expect(text.contains("entity_key column 'missing_column'"))
        #expect(text.contains("warning") && text.contains("expired 2020-01-01"))
        #expect(issues.allSatisfy { $0.file == "bad.yaml" && $0.line > 0 })
    }

    /// SQLite's catalog is not a view a rule may read: it describes the store, and PostgreSQL has none of it.
    @Test func validatorRejectsAQueryThatReadsTheSQLiteCatalog() throws {
        for source in ["sqlite_master", "main.sqlite_schema", "pragma_table_info('credits')"] {
            let rule = try RuleParser(file: "catalog.yaml").parse(
                """
                id: T-CATALOG
                title: catalog
                description: catalog
                version: "1"
                status: stable
                level: low
                query: |
                  SELECT name AS credit_id FROM \(source)
                entity_key: [credit_id]
                """)
            let issues = try RuleValidator().validate([rule], now: Self.now)
            let errors = issues.filter { $0.severity == .error }.map(\.description)
            #expect(
                errors.contains { $0.contains("catalog.yaml:7") && $0.contains("the SQLite catalog") },
                "\(source): \(errors)")
        }
    }

    @Test func exceptionSuppressesUntilItExpires() throws {
        let store = try Self.store(credits: [("c1", "qa-1", 5), ("c2", "u-2", 5)])
        let exception = RuleException(
            match: ["user_id": "qa-1"], owner: "qa", reason: "QA account", expires: "2026-03-31")
        let rule = try Self.creditRule(exceptions: [exception])
        let engine = RuleEngine(store: store, referenceCurrency: "USD")
        let before = try engine.evaluate(rules: [rule], runID: 1, now: Self.now)
        let qa = try #require(before.findings.first { $0.userID == "qa-1" })
        #expect(qa.status == .suppressed)
        #expect(qa.suppression?.owner == "qa")
        #expect(before.stats[0].hits == 1 && before.stats[0].suppressed == 1)
        let afterExpiry = try engine.evaluate(rules: [rule], runID: 2, now: EpochTime.parse("2026-04-01") ?? 0)
        #expect(afterExpiry.findings.first { $0.userID == "qa-1" }?.status == .new)
        #expect(afterExpiry.warnings.contains { $0.contains("expired 2026-03-31") })
    }

    @Test func findingStatusGoesNewRecurringResolvedAcrossRuns() throws {
        let store = try Self.store(credits: [("c1", "u-1", 5), ("c2", "u-2", 5)])
        let rule = try Self.creditRule()
        let engine = RuleEngine(store: store, referenceCurrency: "USD")
        let first = try engine.evaluate(rules: [rule], runID: 1, now: Self.now)
        #expect(first.findings.map(\.status) == [.new, .new])
        try engine.persist(first, runID: 1)

        try store.database.run("UPDATE credit SET reversed_at = ? WHERE credit_id = 'c2'", [.integer(Self.now)])
        let second = try engine.evaluate(rules: [rule], runID: 2, now: Self.now + Self.day)
        let u1 = try #require(second.findings.first { $0.userID == "u-1" })
        #expect(u1.status == .recurring)
        #expect(u1.firstSeenRunID == 1)
        #expect(u1.findingID == first.findings.first { $0.userID == "u-1" }?.findingID)
        #expect(second.findings.first { $0.entityKey.first?.value == "u-2" }?.status == .resolved)
        try engine.persist(second, runID: 2)

        var rows: [[SQLValue]] = []
        try store.query("SELECT status, first_run_id, last_seen_run_id FROM findings ORDER BY user_id", parameters: [:])
        {
            rows.append($1)
        }
        #expect(
            rows == [[.text("recurring"), .integer(1), .integer(2)], [.text("resolved"), .integer(1), .integer(1)]])
        let third = try engine.evaluate(rules: [rule], runID: 3, now: Self.now + 2 * Self.day)
        #expect(third.findings.count == 1, "a resolved finding is not resolved again")
    }

    @Test func paramOverrideChangesTheResult() throws {
        let store = try Self.store(credits: [("c1", "u-1", 5), ("c2", "u-2", 50)])
        let rule = try Self.creditRule()
        let defaults = try RuleEngine(store: store, referenceCurrency: "USD").evaluate(
            rules: [rule], runID: 1, now: Self.now)
        #expect(defaults.stats[0].hits == 2)
        let tuned = try RuleEngine(
            store: store, referenceCurrency: "USD", paramOverrides: ["T-001": ["min_units": .integer(10)]]
        )
        .evaluate(rules: [rule], runID: 1, now: Self.now)
        #expect(tuned.findings.map(\.userID) == ["u-2"])
        #expect(tuned.findings.first?.threshold == "10")
    }

    @Test func inconclusiveRowsAreCountedAndCarryTheirReason() throws {
        let (rules, _) = RuleSet.load(from: Self.rulesFolder)
        let rule = try #require(rules.first { $0.id == "IAP-008" })
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        var loader = RuleFixtureLoader(database: store.database)
        for (view, rows) in try #require(rule.tests.first).given { try loader.insert(view: view, rows: rows) }
        let result = try RuleEngine(store: store, referenceCurrency: "USD").evaluate(
            rules: [rule], runID: 1, now: Self.now)
        let inconclusive = result.findings.filter { $0.outcome == .inconclusive }
        #expect(inconclusive.map(\.transactionID) == ["3"])
        #expect(inconclusive.first?.inconclusiveReason?.contains("ARS") == true)
        #expect(result.stats[0].inconclusive == 1 && result.stats[0].hits == 1)
        let hit = try #require(result.findings.first { $0.outcome == .hit })
        #expect(hit.amountRef == 7490)
        #expect(hit.evidence.contains { $0.kind == "episode-purchase" })
    }

    @Test func backtestShowsNewGoneAndUnchangedHits() throws {
        let store = try Self.store(credits: [("c1", "u-1", 5), ("c2", "u-2", 50)])
        let baseline = try Self.creditRule()
        var candidate = baseline
        candidate.params = [Rule.Param(name: "min_units", defaultValue: .integer(10))]
        let rows = try RuleBacktest(store: store, referenceCurrency: "USD")
            .compare(candidate: [candidate], baseline: [baseline], since: 0, until: Self.now)
        #expect(rows.count == 1)
        #expect(rows[0].baselineHits == 2 && rows[0].candidateHits == 1)
        #expect(rows[0].gone.map(\.userID) == ["u-1"] && rows[0].new.isEmpty && rows[0].unchanged == 1)
    }
}

extension Rule {
    func withExceptions(_ exceptions: [RuleException]) -> Rule {
        var copy = self
        copy.exceptions = exceptions
        return copy
    }
}
