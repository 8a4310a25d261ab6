import Foundation
import Testing

@testable import IAPGuard

/// The dirty scope: rows changed after the last evaluation, closed over the keys rules relate by.
@Suite struct ScopeClosureTests {
    static func store(_ given: [(String, [[String: SQLValue]])]) throws -> SQLiteStore {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        try add(given, to: store)
        return store
    }

    /// Inserts fixture rows (view column names) into `store`.
    static func add(_ given: [(String, [[String: SQLValue]])], to store: SQLiteStore) throws {
        var loader = RuleFixtureLoader(database: store.connection)
        for (view, rows) in given {
            try loader.insert(view: view, rows: rows.map { RuleTest.FixtureRow(values: $0) })
        }
    }

    static func scope(_ store: SQLiteStore) throws -> Set<String> {
        Set(
            try store.database.query("SELECT kind, scope_key FROM incremental_scope WHERE rule_id = ''").map {
                "\($0[0].textValue ?? ""):\($0[1].textValue ?? "")"
            })
    }

    /// A world of two users: u-1 bought T1 (original O1) and T2, u-2 bought T3; u-1's T1 was also
    /// credited to u-3.
    static func world() throws -> SQLiteStore {
        try store([
            (
                "transactions",
                [
                    [
                        "transaction_id": .text("T1"), "original_transaction_id": .text("O1"),
                        "app_account_token": .text("AAAA-1"),
                    ],
                    ["transaction_id": .text("T2"), "original_transaction_id": .text("T2")],
                    ["transaction_id": .text("T3"), "original_transaction_id": .text("T3")],
                ]
            ),
            (
                "orders",
                [
                    ["order_id": .text("o-1"), "user_id": .text("u-1"), "transaction_id": .text("T1")],
                    ["order_id": .text("o-2"), "user_id": .text("u-1"), "transaction_id": .text("T2")],
                    ["order_id": .text("o-3"), "user_id": .text("u-2"), "transaction_id": .text("T3")],
                ]
            ),
            (
                "credits",
                [
                    [
                        "credit_id": .text("c-1"), "transaction_id": .text("T1"), "order_id": .text("o-1"),
                        "user_id": .text("u-1"),
                    ],
                    [
                        "credit_id": .text("c-2"), "transaction_id": .text("T2"), "order_id": .text("o-2"),
                        "user_id": .text("u-1"),
                    ],
                    [
                        "credit_id": .text("c-3"), "transaction_id": .text("T3"), "order_id": .text("o-3"),
                        "user_id": .text("u-2"),
                    ],
                    ["credit_id": .text("c-4"), "transaction_id": .text("T1"), "user_id": .text("u-3")],
                ]
            ),
        ])
    }

    static func ruleScope(_ store: SQLiteStore, _ ruleID: String) throws -> Set<String> {
        Set(
            try store.database.query(
                "SELECT kind, scope_key FROM incremental_scope WHERE rule_id = ?", [.text(ruleID)]
            ).map { "\($0[0].textValue ?? ""):\($0[1].textValue ?? "")" })
    }

    static func refundOfT1() throws -> SQLiteStore {
        let store = try Self.world()
        var loader = RuleFixtureLoader(database: store.connection)
        try loader.insert(
            view: "notifications",
            rows: [
                RuleTest.FixtureRow(values: [
                    "notification_uuid": .text("n-1"), "notification_type": .text("REFUND"),
                    "transaction_id": .text("T1"), "verification": .text("verified"),
                ])
            ])
        try store.database.run("UPDATE notification SET first_run_id = 2")
        return store
    }

    @Test func aNewRefundScopesItsTransactionTheCreditedUsersAndTheOrderOwnersButNotTheirOtherPurchases() throws {
        let store = try Self.refundOfT1()
        let counts = try ScopeBuilder(database: store.connection).build(sinceRunID: 1, fxChangedFrom: nil)
        let scope = try Self.scope(store)
        for expected in [
            "transaction_id:T1", "original_transaction_id:O1", "app_account_token:aaaa-1", "user_id:u-1",
            "user_id:u-3", "order_id:o-1", "credit_id:c-1", "credit_id:c-4",
        ] {
            #expect(scope.contains(expected), "missing \(expected)")
        }
        // u-1's other purchase shares only the user with T1: a rule needs it only if it says so.
        for unrelated in [
            "transaction_id:T2", "order_id:o-2", "credit_id:c-2", "transaction_id:T3", "user_id:u-2", "order_id:o-3",
            "credit_id:c-3",
        ] {
            #expect(!scope.contains(unrelated), "\(unrelated) is not in the shared scope")
        }
        #expect(counts[.transactionID] == 1)
    }

    @Test func aNewRefundScopesTheOtherPurchasesOfItsOriginalWithTheirOrdersAndCredits() throws {
        let store = try Self.refundOfT1()
        try Self.add(
            [
                ("transactions", [["transaction_id": .text("T4"), "original_transaction_id": .text("O1")]]),
                ("orders", [["order_id": .text("o-4"), "user_id": .text("u-4"), "transaction_id": .text("T4")]]),
                ("credits", [["credit_id": .text("c-5"), "transaction_id": .text("T4"), "user_id": .text("u-5")]]),
            ], to: store)
        let builder = ScopeBuilder(database: store.connection)
        let built = try builder.buildShared(sinceRunID: 1, fxChangedFrom: nil)
        // T4 shares T1's original id (step 2); its order, owner, credit and credited user follow (step 3).
        let passes = Dictionary(
            uniqueKeysWithValues: try store.database.query(
                "SELECT kind || ':' || scope_key, pass FROM incremental_scope WHERE rule_id = ''"
            ).map { ($0[0].textValue ?? "", $0[1].integerValue ?? -1) })
        for expected in ["transaction_id:T4", "order_id:o-4", "user_id:u-4", "credit_id:c-5", "user_id:u-5"] {
            #expect(passes[expected] == 1, "\(expected) added by the closure: \(passes[expected] ?? -1)")
        }
        // The refund names T1 alone: T1 seeds the scope, its original id comes from the closure.
        #expect(passes["transaction_id:T1"] == 0)
        #expect(passes["original_transaction_id:O1"] == 1)
        // What the planner is handed is what the rules' scope reads back.
        #expect(try RuleScope.loadShared(from: store.connection) == built)
    }

    @Test func aRuleFollowingUsersGetsTheirOtherPurchasesInItsOwnScope() throws {
        let store = try Self.refundOfT1()
        let builder = ScopeBuilder(database: store.connection)
        try builder.build(sinceRunID: 1, fxChangedFrom: nil)
        let shared = try Self.scope(store)
        #expect(try builder.widen(ruleID: "R", kinds: [.userID], limit: 1_000))
        let widened = try Self.ruleScope(store, "R")
        // u-1's other purchase and what hangs on it, under the rule's id only; nothing repeated from the shared
        // scope, and the shared scope unchanged.
        for expected in ["transaction_id:T2", "order_id:o-2", "credit_id:c-2"] {
            #expect(widened.contains(expected), "missing \(expected)")
        }
        #expect(widened.isDisjoint(with: shared))
        #expect(try Self.scope(store) == shared)
        for unrelated in ["transaction_id:T3", "order_id:o-3", "credit_id:c-3"] {
            #expect(!widened.contains(unrelated), "\(unrelated) shares nothing with the change")
        }
        // A second rule following the same kinds gets the same keys.
        try builder.copyWidened(from: "R", to: "R2")
        #expect(try Self.ruleScope(store, "R2") == widened)
    }

    @Test func aWideningPastItsLimitAddsNothing() throws {
        let store = try Self.refundOfT1()
        let builder = ScopeBuilder(database: store.connection)
        try builder.build(sinceRunID: 1, fxChangedFrom: nil)
        // u-1 and u-3 carry three order and credit rows: a limit of 3 rows is reached.
        #expect(try !builder.widen(ruleID: "R", kinds: [.userID], limit: 3))
        #expect(try Self.ruleScope(store, "R").isEmpty)
        #expect(try builder.widen(ruleID: "R", kinds: [.userID], limit: 100))
        #expect(try !Self.ruleScope(store, "R").isEmpty)
    }

    /// u-1 holds token aaaa-1 through two orders (T1, T2), each credited.
    static func heldTokenWorld() throws -> SQLiteStore {
        try store([
            (
                "transactions",
                [
                    ["transaction_id": .text("T1"), "app_account_token": .text("AAAA-1")],
                    ["transaction_id": .text("T2"), "app_account_token": .text("AAAA-1")],
                    ["transaction_id": .text("T9")],
                ]
            ),
            (
                "orders",
                [
                    [
                        "order_id": .text("o-1"), "user_id": .text("u-1"), "transaction_id": .text("T1"),
                        "app_account_token": .text("aaaa-1"),
                    ],
                    [
                        "order_id": .text("o-2"), "user_id": .text("u-1"), "transaction_id": .text("T2"),
                        "app_account_token": .text("aaaa-1"),
                    ],
                ]
            ),
            (
                "credits",
                [
                    ["credit_id": .text("c-1"), "transaction_id": .text("T1"), "user_id": .text("u-1")],
                    ["credit_id": .text("c-2"), "transaction_id": .text("T2"), "user_id": .text("u-1")],
                ]
            ),
        ])
    }

    /// A new order (run 2) of `user` for T9, carrying token aaaa-1.
    static func addOrder(_ store: SQLiteStore, _ id: String, user: String) throws {
        var loader = RuleFixtureLoader(database: store.connection)
        try loader.insert(
            view: "orders",
            rows: [
                RuleTest.FixtureRow(values: [
                    "order_id": .text(id), "user_id": .text(user), "transaction_id": .text("T9"),
                    "app_account_token": .text("aaaa-1"),
                ])
            ])
        try store.database.run("UPDATE backend_order SET last_run_id = 2 WHERE order_id = ?", [.text(id)])
    }

    @Test func widenedByHoldersOnlyWhenAMarkerGainsOrLosesAHolder() throws {
        // The holder's own new order carrying the token: the token's holders are the same.
        let same = try Self.heldTokenWorld()
        try Self.addOrder(same, "o-3", user: "u-1")
        let builder = ScopeBuilder(database: same.connection)
        try builder.build(sinceRunID: 1, fxChangedFrom: nil)
        #expect(try Self.scope(same).contains("app_account_token:aaaa-1"))
        #expect(try builder.changedHolderKeys(.appAccountToken, since: 1).isEmpty)
        #expect(try builder.widen(ruleID: "R", kinds: [.appAccountToken], heldSince: 1, limit: 1_000))
        #expect(try Self.ruleScope(same, "R").isEmpty)
        // Widened by every purchase carrying it instead, the other purchases come in.
        #expect(try builder.widen(ruleID: "P", kinds: [.appAccountToken], limit: 1_000))
        #expect(try Self.ruleScope(same, "P").contains("credit_id:c-1"))

        // Another user's order carrying the token: a new holder, so every purchase carrying it.
        let other = try Self.heldTokenWorld()
        try Self.addOrder(other, "o-4", user: "u-5")
        let otherBuilder = ScopeBuilder(database: other.connection)
        try otherBuilder.build(sinceRunID: 1, fxChangedFrom: nil)
        #expect(try otherBuilder.changedHolderKeys(.appAccountToken, since: 1) == ["aaaa-1"])
        #expect(try otherBuilder.widen(ruleID: "R", kinds: [.appAccountToken], heldSince: 1, limit: 1_000))
        let widened = try Self.ruleScope(other, "R")
        for expected in ["transaction_id:T1", "transaction_id:T2", "credit_id:c-1", "credit_id:c-2"] {
            #expect(widened.contains(expected), "missing \(expected)")
        }

        // An order moved from its holder to another user: the token may have lost its holder.
        let moved = try Self.heldTokenWorld()
        try moved.database.run("UPDATE backend_order SET user_id = 'u-6', last_run_id = 2 WHERE order_id = 'o-2'")
        try moved.database.run(
            "INSERT INTO change_log (run_id, entity, entity_key, field, old_value, new_value) VALUES (2, 'order', 'o-2', 'user_id', 'u-1', 'u-6')"
        )
        #expect(
            try ScopeBuilder(database: moved.connection).changedHolderKeys(.appAccountToken, since: 1) == ["aaaa-1"])

        // An account taking the token, and one whose token was taken off.
        let account = try Self.heldTokenWorld()
        var loader = RuleFixtureLoader(database: account.connection)
        try loader.insert(
            view: "users",
            rows: [RuleTest.FixtureRow(values: ["user_id": .text("u-8"), "app_account_token": .text("BBBB-2")])])
        try account.database.run("UPDATE user_account SET last_run_id = 2")
        try account.database.run(
            "INSERT INTO change_log (run_id, entity, entity_key, field, old_value, new_value) VALUES (2, 'user', 'u-8', 'app_account_token', 'CCCC-3', 'BBBB-2')"
        )
        #expect(
            try ScopeBuilder(database: account.connection).changedHolderKeys(.appAccountToken, since: 1) == [
                "bbbb-2", "cccc-3",
            ])
    }

    @Test func nothingChangedMeansAnEmptyScope() throws {
        let store = try Self.world()
        try ScopeBuilder(database: store.connection).build(sinceRunID: 1, fxChangedFrom: nil)
        #expect(try Self.scope(store).isEmpty)
    }

    @Test func anOrderMovedToAnotherUserScopesTheOldOwnerToo() throws {
        let store = try Self.world()
        try store.database.run("UPDATE backend_order SET user_id = 'u-9', last_run_id = 2 WHERE order_id = 'o-3'")
        try store.database.run(
            "INSERT INTO change_log (run_id, entity, entity_key, field, old_value, new_value) VALUES (2, 'order', 'o-3', 'user_id', 'u-2', 'u-9')"
        )
        try ScopeBuilder(database: store.connection).build(sinceRunID: 1, fxChangedFrom: nil)
        let scope = try Self.scope(store)
        #expect(scope.contains("user_id:u-2"))
        #expect(scope.contains("user_id:u-9"))
        #expect(scope.contains("credit_id:c-3"))
        #expect(!scope.contains("transaction_id:T1"))
    }

    @Test func aChangedAccountScopesItsPurchasesAndThePurchasesCarryingItsToken() throws {
        let store = try Self.world()
        var loader = RuleFixtureLoader(database: store.connection)
        try loader.insert(
            view: "users",
            rows: [
                RuleTest.FixtureRow(values: [
                    "user_id": .text("u-2"), "country": .text("TUR"), "app_account_token": .text("aaaa-1"),
                ])
            ])
        try store.database.run("UPDATE user_account SET first_run_id = 2, last_run_id = 2 WHERE user_id = 'u-2'")
        let builder = ScopeBuilder(database: store.connection)
        try builder.build(sinceRunID: 1, fxChangedFrom: nil)
        #expect(try Self.scope(store) == ["user_id:u-2", "app_account_token:aaaa-1"])
        // Widened by users and tokens: the account's own purchase (its home country decides it), and the
        // purchase carrying the token it now claims with what hangs on it (its owner decides those credits).
        #expect(try builder.widen(ruleID: "R", kinds: [.userID, .appAccountToken], limit: 1_000))
        let scope = try Self.ruleScope(store, "R")
        for expected in ["transaction_id:T3", "credit_id:c-3", "transaction_id:T1", "credit_id:c-1", "credit_id:c-4"] {
            #expect(scope.contains(expected), "missing \(expected)")
        }
        #expect(!scope.contains("transaction_id:T2"))
    }

    @Test func changedFXRatesScopeTransactionsDatedFromTheEarliestChange() throws {
        let store = try Self.world()
        try store.database.run("UPDATE apple_transaction SET purchase_date = 1000 WHERE transaction_id = 'T1'")
        try store.database.run("UPDATE apple_transaction SET purchase_date = 5000 WHERE transaction_id = 'T3'")
        try ScopeBuilder(database: store.connection).build(sinceRunID: 1, fxChangedFrom: 4000)
        let scope = try Self.scope(store)
        #expect(scope.contains("transaction_id:T3"))
        #expect(!scope.contains("transaction_id:T1"))
    }
}
