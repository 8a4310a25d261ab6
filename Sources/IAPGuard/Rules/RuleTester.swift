import Foundation

/// The outcome of one inline test.
public struct RuleTestResult: Sendable, Hashable, CustomStringConvertible {
    public var ruleID: String
    public var file: String
    public var testName: String
    public var line: Int
    /// Empty when the test passed.
    public var failures: [String]

    public var passed: Bool { failures.isEmpty }

    public var description: String {
        let head = "\(passed ? "PASS" : "FAIL") \(ruleID) \(testName) (\(file):\(line))"
        return ([head] + failures.map { "    - \($0)" }).joined(separator: "\n")
    }
}

/// Runs rules' inline tests: each test gets a fresh in-memory store (migrated), its fixture rows, and one
/// evaluation of the rule at the test's `now` with the test's `params`; then the expectations are checked.
public struct RuleTester {
    /// Reference currency for tests (a test may set `reference_currency` in its params).
    public var referenceCurrency: String
    /// Makes the empty, migrated store each test runs in (default: an in-memory SQLite store; the
    /// PostgreSQL tests pass a fresh schema).
    public var makeStore: () throws -> any SQLBackedStore = {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        return store
    }

    public init(referenceCurrency: String = "USD") {
        self.referenceCurrency = referenceCurrency
    }

    /// Runs every test of every rule.
    public func run(_ rules: [Rule]) -> [RuleTestResult] {
        rules.flatMap { rule in rule.tests.map { run($0, of: rule) } }
    }

    /// Runs one test.
    public func run(_ test: RuleTest, of rule: Rule) -> RuleTestResult {
        var result = RuleTestResult(
            ruleID: rule.id, file: rule.file, testName: test.name, line: test.line, failures: [])
        do {
            let store = try makeStore()
            var loader = RuleFixtureLoader(database: store.connection)
            for (view, rows) in test.given {
                do {
                    try loader.insert(view: view, rows: rows)
                } catch let error as RuleFixtureLoader.FixtureError {
                    result.failures.append("fixture \(rule.file):\(error.line): \(error.message)")
                }
            }
            guard result.failures.isEmpty else { return result }
            var params = test.params
            let currency = params.removeValue(forKey: "reference_currency")?.textValue ?? referenceCurrency
            let engine = RuleEngine(store: store, referenceCurrency: currency, paramOverrides: [rule.id: params])
            engine.usesStoredFindings = false
            engine.keepsResultRows = true
            let evaluation = engine.evaluate(
                rule: rule, runID: 1, now: test.now, since: 0, fx: try FXTable(store: store))
            if let error = evaluation.stats.error {
                result.failures.append("rule query failed: \(error)")
                return result
            }
            result.failures += check(test, evaluation.items)
            result.failures += try checkIncremental(test, of: rule, engine: engine, store: store, full: evaluation)
        } catch {
            result.failures.append("test setup failed: \(error)")
        }
        return result
    }

    func check(_ test: RuleTest, _ items: [RuleEngine.Item]) -> [String] {
        var failures: [String] = []
        let hits = items.filter { $0.finding.outcome == .hit && $0.finding.status != .suppressed }
        let inconclusive = items.filter { $0.finding.outcome == .inconclusive && $0.finding.status != .suppressed }
        let suppressed = items.filter { $0.finding.status == .suppressed }
        func describe(_ list: [RuleEngine.Item]) -> String {
            list.isEmpty
                ? "none"
                : list.map { item in
                    item.finding.entityKey.map { "\($0.name)=\($0.value ?? "NULL")" }.joined(separator: ", ")
                        + " [\(item.finding.level.rawValue)]"
                }.joined(separator: "; ")
        }
        for expected in test.hits {
            let matching = hits.filter { expected.matches($0.row) }
            if matching.isEmpty {
                failures.append(
                    "line \(expected.line): expected hit {\(expected.rendered)} not found; hits: \(describe(hits))")
            } else if let level = expected.fields["level"],
                !matching.contains(where: { $0.finding.level.rawValue == level })
            {
                failures.append(
                    "line \(expected.line): hit {\(expected.rendered)} has level \(matching.map(\.finding.level.rawValue).joined(separator: ","))"
                )
            }
        }
        for unexpected in test.nonHits {
            let matching = hits.filter { unexpected.matches($0.row) }
            if !matching.isEmpty {
                failures.append(
                    "line \(unexpected.line): expected no hit for {\(unexpected.rendered)} but got: \(describe(matching))"
                )
            }
        }
        for expected in test.inconclusive {
            let matching = inconclusive.filter { expected.matches($0.row) }
            if matching.isEmpty {
                failures.append(
                    "line \(expected.line): expected inconclusive {\(expected.rendered)} not found; inconclusive: \(describe(inconclusive))"
                )
            } else if let reason = expected.fields["reason"],
                !matching.contains(where: { ($0.finding.inconclusiveReason ?? "").contains(reason) })
            {
                failures.append(
                    "line \(expected.line): inconclusive reason is '\(matching.compactMap(\.finding.inconclusiveReason).joined(separator: "; "))', expected it to contain '\(reason)'"
                )
            }
        }
        for expected in test.suppressed where !suppressed.contains(where: { expected.matches($0.row) }) {
            failures.append(
                "line \(expected.line): expected suppressed {\(expected.rendered)} not found; suppressed: \(describe(suppressed))"
            )
        }
        if test.strict {
            let stray = hits.filter { hit in !test.hits.contains { $0.matches(hit.row) } }
            if !stray.isEmpty { failures.append("unexpected hits: \(describe(stray))") }
            let strayInconclusive = inconclusive.filter { item in !test.inconclusive.contains { $0.matches(item.row) } }
            if !strayInconclusive.isEmpty { failures.append("unexpected inconclusive: \(describe(strayInconclusive))") }
        }
        return failures
    }
}
