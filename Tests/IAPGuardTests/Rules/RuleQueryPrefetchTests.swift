import Foundation
import Testing

@testable import IAPGuard

/// Full-mode rule queries run ahead on read-only connections (``RuleEngine/prefetchFullQueries``): the
/// findings, counts and errors are those of the queries run one by one on the store's connection.
@Suite struct RuleQueryPrefetchTests {
    static let rulesFolder = Fixtures.repoRoot.appendingPathComponent("rules")

    /// A world run once by the binary: a SQLite file store with data and no open transaction.
    static let world: Result<PipelineTestWorld, any Error> = Result {
        let world = try PipelineTestWorld()
        let outcome = try world.run()
        guard outcome.status == 0 || outcome.status == 2 else {
            throw StoreError(message: "run failed (\(outcome.status)): \(outcome.stderr.suffix(800))")
        }
        return world
    }

    static func counts(_ result: RuleRunResult) -> [String] {
        result.stats.map { "\($0.ruleID) \($0.hits) \($0.inconclusive) \($0.suppressed) \($0.error ?? "-")" }
    }

    @Test func prefetchedQueriesGiveTheFindingsOfQueriesRunOneByOne() throws {
        let world = try Self.world.get()
        let now = try #require(TimeParser.rfc3339(PipelineTestWorld.until))
        var (rules, errors) = RuleSet.load(from: Self.rulesFolder)
        #expect(errors.isEmpty)
        // A broken query fails the same way on a reader, and the rules after it still run.
        var broken = rules[0]
        broken.id = "IAP-BROKEN"
        broken.query = "SELECT no_such_column FROM transactions"
        rules.insert(broken, at: 1)
        let store = try SQLiteStore(path: world.storePath)
        func evaluate(readers: Int?) throws -> RuleRunResult {
            let engine = RuleEngine(store: store, referenceCurrency: "USD")
            if let readers {
                try engine.prefetchFullQueries(of: rules, now: now, since: nil, readers: readers)
                #expect(engine.isPrefetching)
            }
            return try engine.evaluate(rules: rules, runID: 99, now: now)
        }
        let serial = try evaluate(readers: nil)
        #expect(serial.findings.count > 10)
        #expect(serial.stats.first { $0.ruleID == "IAP-BROKEN" }?.error?.contains("no_such_column") == true)
        for readers in [1, 2, 3] {
            let parallel = try evaluate(readers: readers)
            #expect(parallel.findings == serial.findings, "\(readers) readers")
            #expect(Self.counts(parallel) == Self.counts(serial), "\(readers) readers")
        }
    }

    @Test func readersSortInASmallPageCache() throws {
        let world = try Self.world.get()
        let prefetch = RuleQueryPrefetch(
            path: world.storePath, jobs: [.init(key: "cache", sql: "PRAGMA cache_size", parameters: [:])], readers: 1)
        let outcome = try #require(prefetch.take("cache"))
        #expect(try outcome.rows.get().values == [[.integer(-Int64(RuleQueryPrefetch.readerCacheKiB))]])
    }

    @Test func scopedRulesAndStoresWithoutAFileAreNotPrefetched() throws {
        let world = try Self.world.get()
        let (rules, _) = RuleSet.load(from: Self.rulesFolder)
        let memory = RuleEngine(store: try SQLiteStore(path: ":memory:"), referenceCurrency: "USD")
        try memory.prefetchFullQueries(of: rules, now: 0, since: nil, readers: 2)
        #expect(!memory.isPrefetching)
        // Every rule in an incremental scope: nothing is left to run ahead.
        let engine = RuleEngine(store: try SQLiteStore(path: world.storePath), referenceCurrency: "USD")
        let incremental = rules.filter { $0.incremental != nil }
        #expect(incremental.count > 1)
        for rule in incremental {
            guard let section = rule.incremental else { continue }
            engine.scopes[rule.id] = RuleScope(incremental: section, query: rule.query, keys: [:])
        }
        try engine.prefetchFullQueries(of: incremental, now: 0, since: nil, readers: 2)
        #expect(!engine.isPrefetching)
        try engine.prefetchFullQueries(of: rules, now: 0, since: nil, readers: 2)
        // Rules without an incremental section always run fully, beside the scoped ones.
        #expect(engine.isPrefetching == (rules.count > incremental.count))
    }

    /// Once the pipeline has committed the scope, the scoped queries run on the readers too: each reader
    /// runs the rule's scoped query, not its full one, and the findings are those of the scoped queries run
    /// on the store's connection.
    @Test func scopedQueriesRunOnReadersOnceTheScopeIsCommitted() throws {
        let world = try Self.world.get()
        let now = try #require(TimeParser.rfc3339(PipelineTestWorld.until))
        let (rules, _) = RuleSet.load(from: Self.rulesFolder)
        let store = try SQLiteStore(path: world.storePath)
        let serial = RuleEngine(store: store, referenceCurrency: "USD")
        let full = try serial.evaluate(rules: rules, runID: 99, now: now)
        // A rule with hits, scoped to nothing: its scoped query returns no row, its full query some.
        let scoped = try #require(
            rules.first { rule in rule.incremental != nil && full.findings.contains { $0.ruleID == rule.id } })
        let section = try #require(scoped.incremental)
        let scope = RuleScope(incremental: section, query: "SELECT * FROM (\(scoped.query)) s WHERE 0", keys: [:])
        serial.scopes[scoped.id] = scope
        let oneByOne = try serial.evaluate(rules: rules, runID: 99, now: now)
        let committed = RuleEngine(store: store, referenceCurrency: "USD")
        committed.scopes[scoped.id] = scope
        let prefetch = try #require(
            try committed.prefetchQueries(
                of: rules, now: now, since: nil, readers: 2, extraJobs: [], scopeCommitted: true))
        #expect(try prefetch.take(scoped.id)?.rows.get().values.isEmpty == true)
        let readers = RuleEngine(store: store, referenceCurrency: "USD")
        readers.scopes[scoped.id] = scope
        _ = try readers.prefetchQueries(
            of: rules, now: now, since: nil, readers: 2, extraJobs: [], scopeCommitted: true)
        let ahead = try readers.evaluate(rules: rules, runID: 99, now: now)
        #expect(ahead.findings == oneByOne.findings)
        #expect(Self.counts(ahead) == Self.counts(oneByOne))
        for result in [oneByOne, ahead] {
            #expect(result.stats.first { $0.ruleID == scoped.id }?.mode == "incremental")
        }
    }

    /// The pipeline starts the rules that always run fully (with its own counts) before it plans, then the
    /// rest: a rule already started is not started again, and extra jobs come back from the prefetch.
    @Test func aRuleStartedAheadIsNotStartedAgainAndExtraJobsAreTakenFromThePrefetch() throws {
        let world = try Self.world.get()
        let (rules, _) = RuleSet.load(from: Self.rulesFolder)
        let full = rules.filter { $0.incremental == nil }
        #expect(!full.isEmpty)
        let engine = RuleEngine(store: try SQLiteStore(path: world.storePath), referenceCurrency: "USD")
        let count = RuleQueryPrefetch.Job(key: "count", sql: "SELECT COUNT(*) FROM credits", parameters: [:])
        let early = try engine.prefetchQueries(of: full, now: 0, since: nil, readers: 1, extraJobs: [count])
        #expect(try early?.take("count")?.rows.get().values.first?.first?.integerValue ?? -1 > 0)
        // Nothing new: no second prefetch.
        #expect(try engine.prefetchQueries(of: full, now: 0, since: nil, readers: 1, extraJobs: []) == nil)
        let rest = try engine.prefetchQueries(of: rules, now: 0, since: nil, readers: 1, extraJobs: [])
        #expect(rest != nil)
        // The early rules' rows are in the early prefetch only.
        for rule in full { #expect(rest?.take(rule.id) == nil, "\(rule.id) started twice") }
        #expect(early?.take(full[0].id) != nil)
    }
}
