import Foundation
import Testing

@testable import IAPGuard

/// The credits IAP-012 cannot check are kept between runs; a daily run re-tells only its scope's credits,
/// and only when the kept gaps are at least as recent as the run its scope counts changes from.
@Suite struct CoverageGapsTests {
    static func store() throws -> SQLiteStore {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        return store
    }

    static func credit(_ id: String, transaction: String, user: String = "u-1") -> [SQLValue] {
        [
            .text(id), .text(transaction), .text(user), .integer(1_000), .text("credits"), .text("credits.jsonl:1"),
            .text("hash"), .integer(1), .integer(1),
        ]
    }

    static func insertCredit(_ store: SQLiteStore, _ id: String, transaction: String) throws {
        try store.database.run(
            """
            INSERT INTO credit (credit_id, transaction_id, user_id, credited_at, source_name, source_ref, row_hash,
                                first_run_id, last_run_id)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, credit(id, transaction: transaction))
    }

    static func gaps(_ store: SQLiteStore) throws -> [String] {
        try store.database.query("SELECT credit_id FROM coverage_gap ORDER BY credit_id").compactMap {
            $0.first?.textValue
        }
    }

    @Test func aScopedRefreshNeedsGapsKeptSinceTheScopesRun() throws {
        let store = try Self.store()
        let gaps = CoverageGaps(connection: store.database)
        try Self.insertCredit(store, "c-1", transaction: "t-1")
        // Nothing kept yet, or no scope: every credit must be told.
        #expect(try !gaps.refreshScoped(scopeSince: 3, runID: 4))
        #expect(try !gaps.refreshScoped(scopeSince: nil, runID: 4))
        try gaps.replace(with: try store.database.query(CoverageGaps.rowsSQL(scoped: false)), runID: 2)
        #expect(try Self.gaps(store) == ["c-1"])
        // Kept at run 2: a scope of the changes after run 3 would miss run 3's.
        #expect(try !gaps.refreshScoped(scopeSince: 3, runID: 4))
        // A scope of the changes after run 2 holds a new credit; one outside the scope is not told.
        try Self.insertCredit(store, "c-2", transaction: "t-2")
        try Self.insertCredit(store, "c-3", transaction: "t-3")
        try store.database.run(
            "INSERT INTO incremental_scope (rule_id, kind, scope_key) VALUES ('', 'credit_id', 'c-2')", [])
        #expect(try gaps.refreshScoped(scopeSince: 2, runID: 3))
        #expect(try Self.gaps(store) == ["c-1", "c-2"])
        #expect(try store.database.scalar("SELECT run_id FROM coverage_state")?.integerValue == 3)
        #expect(try gaps.counts(now: 0).map { $0.map(\.description) } == [["NULL", "2"]])
    }

    /// A credit whose token no one owned stops being a gap when a later order of another purchase carries
    /// the token. That order shares only the token with the credit: the shared scope does not hold the
    /// credit, the coverage line's scope widened by the tokens and usernames that changed holders does.
    @Test func aCreditWhoseTokenAnotherOrderNowCarriesIsReToldThroughTheWidenedScope() throws {
        let store = try ScopeClosureTests.store([
            (
                "transactions",
                [
                    ["transaction_id": .text("T1"), "app_account_token": .text("AAAA-1")],
                    ["transaction_id": .text("T9")],
                ]
            ),
            ("credits", [["credit_id": .text("c-1"), "transaction_id": .text("T1"), "user_id": .text("u-1")]]),
        ])
        let gaps = CoverageGaps(connection: store.database)
        try gaps.replace(with: try store.database.query(CoverageGaps.rowsSQL(scoped: false)), runID: 1)
        #expect(try Self.gaps(store) == ["c-1"])
        try ScopeClosureTests.addOrder(store, "o-9", user: "u-2")
        try ScopeBuilder(database: store.connection).build(sinceRunID: 1, fxChangedFrom: nil)
        #expect(try ScopeClosureTests.scope(store).contains("credit_id:c-1") == false)
        let planner = IncrementalPlanner(store: store, referenceCurrency: "USD", paramOverrides: [:])
        var plan = IncrementalPlanner.Plan()
        plan.sharedScopeSince = 1
        #expect(try planner.widen(&plan, id: CoverageGaps.scopeID, kinds: CoverageGaps.sharedKeys, holders: true))
        #expect(try gaps.refreshScoped(scopeSince: 1, runID: 2))
        #expect(try Self.gaps(store).isEmpty)
    }
}
