import Foundation
import Testing

@testable import IAPGuard

/// Time dependence and the choice of mode: entities whose result can change only because `:now` moved join
/// the scope; anything the planner cannot scope soundly is evaluated fully.
@Suite struct IncrementalPlannerTests {
    static let hour: Int64 = 3_600_000

    static func rule(_ id: String) throws -> Rule {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { root.deleteLastPathComponent() }
        let (rules, errors) = RuleSet.load(from: root.appendingPathComponent("rules"))
        #expect(errors.isEmpty)
        return try #require(rules.first { $0.id == id })
    }

    static func store(_ given: [(String, [[String: SQLValue]])]) throws -> SQLiteStore {
        try ScopeClosureTests.store(given)
    }

    /// A rule with one scope macro and no `incremental:` block yet.
    static let scopedRuleText = """
        id: X-1
        title: t
        description: d
        version: "1"
        status: stable
        level: low
        query: |
          SELECT credit_id FROM credits c WHERE {{scope credit_id: c.credit_id}}
        entity_key: [credit_id]
        """

    static func planner(_ store: SQLiteStore) -> IncrementalPlanner {
        IncrementalPlanner(store: store, referenceCurrency: "USD", paramOverrides: [:])
    }

    static func keys(_ rule: Rule, _ store: SQLiteStore, from: Int64, to: Int64) throws -> Set<String> {
        Set(try planner(store).timeKeys(rule, previousNow: from, now: to).map { "\($0.0.rawValue):\($0.1)" })
    }

    @Test func aRefundGracePeriodEndingBetweenTheTwoNowsScopesTheTransaction() throws {
        let rule = try Self.rule("IAP-015")
        let refund: Int64 = 1_000 * Self.hour
        let store = try Self.store([
            (
                "notifications",
                [
                    [
                        "notification_uuid": .text("n"), "notification_type": .text("REFUND"),
                        "transaction_id": .text("T1"),
                        "revocation_date": .integer(refund), "verification": .text("verified"),
                    ]
                ]
            )
        ])
        // grace_hours defaults to 72: the outcome can change when :now passes refund + 72 h.
        #expect(
            try Self.keys(rule, store, from: refund + 71 * Self.hour, to: refund + 73 * Self.hour) == [
                "transaction_id:T1"
            ])
        #expect(try Self.keys(rule, store, from: refund + 73 * Self.hour, to: refund + 90 * Self.hour).isEmpty)
        #expect(try Self.keys(rule, store, from: refund - Self.hour, to: refund + Self.hour) == ["transaction_id:T1"])
    }

    @Test func aCreditReversalDatedBetweenTheTwoNowsScopesIt() throws {
        let rule = try Self.rule("IAP-001")
        let store = try Self.store([
            (
                "credits",
                [
                    [
                        "credit_id": .text("c"), "transaction_id": .text("T1"), "user_id": .text("u"),
                        "reversed_at": .integer(500 * Self.hour),
                    ]
                ]
            )
        ])
        #expect(try Self.keys(rule, store, from: 400 * Self.hour, to: 600 * Self.hour) == ["transaction_id:T1"])
        #expect(try Self.keys(rule, store, from: 600 * Self.hour, to: 700 * Self.hour).isEmpty)
    }

    /// IAP-016 compares each user's refund rate with the app's own, which any refund anywhere moves: a
    /// scoped evaluation could not be exact, so the rule has no incremental block and always runs fully.
    @Test func refundAbuseIsEvaluatedFullyBecauseItComparesWithTheAppsOwnRefundRate() throws {
        let rule = try Self.rule("IAP-016")
        #expect(rule.incremental == nil)
        #expect(!rule.query.contains("{{scope"))
        #expect(rule.query.contains("baseline"))
    }

    @Test func aRuleScopeIsTheSharedKeysPlusItsOwnTimeKeysAndNoOtherRules() throws {
        let store = try Self.store([])
        let builder = ScopeBuilder(database: store.connection)
        try store.database.run(
            "INSERT INTO incremental_scope (rule_id, kind, scope_key) VALUES ('', 'transaction_id', 'T1'), ('', 'user_id', 'u-1')",
            [])
        try builder.add(ruleID: "IAP-001", keys: [(.transactionID, "T2"), (.transactionID, "T1")])
        try builder.add(ruleID: "IAP-015", keys: [(.transactionID, "T9"), (.appAccountToken, "ABC")])
        let shared = try RuleScope.loadShared(from: store.connection)
        #expect(shared == [.transactionID: ["T1"], .userID: ["u-1"]])
        let first = try #require(try RuleScope.load(rule: Self.rule("IAP-001"), shared: shared, from: store.connection))
        #expect(first.keys == [.transactionID: ["T1", "T2"], .userID: ["u-1"]])
        let other = try #require(try RuleScope.load(rule: Self.rule("IAP-015"), shared: shared, from: store.connection))
        #expect(other.keys == [.transactionID: ["T1", "T9"], .userID: ["u-1"], .appAccountToken: ["abc"]])
        // Loading without a shared read first gives the same scope.
        #expect(try RuleScope.load(rule: Self.rule("IAP-015"), from: store.connection)?.keys == other.keys)
        // Adding a rule's keys leaves the shared sets as they were.
        #expect(shared == [.transactionID: ["T1"], .userID: ["u-1"]])
    }

    @Test func aGracePeriodEndingBetweenTheTwoNowsScopesTheUncreditedPurchase() throws {
        let rule = try Self.rule("IAP-014")
        let purchase: Int64 = 2_000 * Self.hour
        let store = try Self.store([
            (
                "transactions",
                [
                    [
                        "transaction_id": .text("T1"), "purchase_date": .integer(purchase),
                        "environment": .text("Production"), "verification": .text("verified"),
                    ],
                    [
                        "transaction_id": .text("T2"), "purchase_date": .integer(purchase - 100 * Self.hour),
                        "environment": .text("Production"), "verification": .text("verified"),
                    ],
                ]
            )
        ])
        // grace_hours defaults to 24: T1 becomes reportable when :now passes its purchase + 24 h.
        #expect(
            try Self.keys(rule, store, from: purchase + 23 * Self.hour, to: purchase + 25 * Self.hour) == [
                "transaction_id:T1"
            ])
        #expect(
            try Self.keys(rule, store, from: purchase + 24 * Self.hour, to: purchase + 24 * Self.hour) == [
                "transaction_id:T1"
            ])
        #expect(try Self.keys(rule, store, from: purchase + 25 * Self.hour, to: purchase + 90 * Self.hour).isEmpty)
        #expect(try Self.keys(rule, store, from: purchase, to: purchase + 23 * Self.hour).isEmpty)
    }

    @Test func theMissingCreditRuleReevaluatesItsOpenFindingsOnEveryRunAndOtherRulesDoNot() throws {
        let missing = try Self.rule("IAP-014")
        let duplicate = try Self.rule("IAP-001")
        #expect(missing.incremental?.reevaluatesOpenFindings == true)
        #expect(duplicate.incremental?.reevaluatesOpenFindings == false)
        let store = try Self.store([])
        let planner = Self.planner(store)
        for rule in [missing, duplicate] {
            let stats = RuleRunResult.RuleStats(ruleID: rule.id, ruleVersion: rule.version, ruleStatus: rule.status)
            try planner.record(RuleRunResult(stats: [stats]), rules: [rule], runID: 1, now: 1_000 * Self.hour)
        }
        // Standing findings of both rules (open, suppressed) and resolved ones, none of them in the shared
        // scope (nothing changed since run 1) nor due to a time query.
        for (id, rule, status, key) in [
            ("f1", "IAP-014", "new", "T-open"), ("f2", "IAP-014", "suppressed", "T-suppressed"),
            ("f3", "IAP-014", "resolved", "T-resolved"), ("f4", "IAP-001", "recurring", "T-duplicate"),
        ] {
            try store.database.run(
                """
                INSERT INTO finding (finding_id, rule_id, rule_version, rule_title, entity_key, level, status, outcome,
                    transaction_id, summary, evidence_json, first_run_id, last_seen_run_id, last_run_id)
                VALUES (?, ?, '1', 't', ?, 'medium', ?, 'hit', ?, 's', '[]', 1, 1, 1)
                """,
                [
                    .text(id), .text(rule), .text(#"[{"name":"transaction_id","value":"\#(key)"}]"#), .text(status),
                    .text(key),
                ])
        }
        let plan = try planner.plan(rules: [missing, duplicate], runID: 2, now: 1_001 * Self.hour, forceFull: nil)
        #expect(plan.modes["IAP-014"]?.isIncremental == true)
        #expect(plan.scopes["IAP-014"]?.keys[.transactionID] == ["T-open", "T-suppressed"])
        #expect(plan.modes["IAP-001"]?.isIncremental == true)
        #expect(plan.scopes["IAP-001"]?.keys[.transactionID, default: []].isEmpty == true)
        // A standing finding without the key column cannot be scoped: the rule runs fully.
        try store.database.run(
            """
            INSERT INTO finding (finding_id, rule_id, rule_version, rule_title, entity_key, level, status, outcome,
                summary, evidence_json, first_run_id, last_seen_run_id, last_run_id)
            VALUES ('f5', 'IAP-014', '1', 't', '[]', 'medium', 'new', 'hit', 's', '[]', 1, 1, 1)
            """, [])
        let fallback = try planner.plan(rules: [missing], runID: 2, now: 1_001 * Self.hour, forceFull: nil)
        #expect(fallback.modes["IAP-014"] == .full(reason: "a standing finding's key cannot be told"))
    }

    @Test func aChangedAccountScopesTheRulesThatReadAccountsInsteadOfRunningThemFully() throws {
        let owner = try Self.rule("IAP-012")
        let duplicate = try Self.rule("IAP-001")
        let store = try Self.store([])
        let planner = Self.planner(store)
        for rule in [owner, duplicate] {
            let stats = RuleRunResult.RuleStats(ruleID: rule.id, ruleVersion: rule.version, ruleStatus: rule.status)
            try planner.record(RuleRunResult(stats: [stats]), rules: [rule], runID: 1, now: 1_000 * Self.hour)
        }
        try store.database.run(
            """
            INSERT INTO user_account (user_id, country, app_account_token, application_username, source_name,
                                      source_ref, row_hash, first_run_id, last_run_id)
            VALUES ('u-1', 'TUR', 'a3c1e0d2-0000-4000-8000-000000000001', 'name-1', 'users', 'users.csv:2', 'h',
                    2, 2)
            """, [])
        try store.database.run(
            """
            INSERT INTO change_log (run_id, entity, entity_key, field, old_value, new_value)
            VALUES (2, 'user', 'u-2', 'app_account_token', 'B7D2E0D2-0000-4000-8000-000000000002', NULL)
            """, [])
        let plan = try planner.plan(rules: [owner, duplicate], runID: 2, now: 1_001 * Self.hour, forceFull: nil)
        #expect(plan.modes["IAP-012"]?.isIncremental == true)
        #expect(plan.modes["IAP-001"]?.isIncremental == true)
        let scope = Set(
            try store.database.query("SELECT kind, scope_key FROM incremental_scope WHERE rule_id = ''").map {
                "\($0[0].textValue ?? "")=\($0[1].textValue ?? "")"
            })
        // The account, its token and username, and the token it held before.
        #expect(scope.contains("user_id=u-1"))
        #expect(scope.contains("app_account_token=a3c1e0d2-0000-4000-8000-000000000001"))
        #expect(scope.contains("application_username=name-1"))
        #expect(scope.contains("app_account_token=b7d2e0d2-0000-4000-8000-000000000002"))
    }

    @Test func aRuleRunsIncrementallyOnlyAfterAnUnchangedEvaluationAndNotWhenItPricedAtNow() throws {
        let rule = try Self.rule("IAP-001")
        let store = try Self.store([])
        let planner = Self.planner(store)
        #expect(
            try planner.plan(rules: [rule], runID: 1, now: 1000, forceFull: nil).modes["IAP-001"]
                == .full(reason: "no earlier evaluation"))
        var stats = RuleRunResult.RuleStats(ruleID: rule.id, ruleVersion: rule.version, ruleStatus: rule.status)
        try planner.record(RuleRunResult(stats: [stats]), rules: [rule], runID: 1, now: 1000)
        #expect(
            try planner.plan(rules: [rule], runID: 2, now: 2000, forceFull: nil).modes["IAP-001"]?.isIncremental == true
        )
        #expect(
            try planner.plan(rules: [rule], runID: 2, now: 500, forceFull: nil).modes["IAP-001"]?.isIncremental == false
        )
        #expect(
            try planner.plan(rules: [rule], runID: 2, now: 2000, forceFull: "--full-rebuild").modes["IAP-001"]
                == .full(reason: "--full-rebuild"))
        var changed = rule
        changed.query += " "
        #expect(
            try planner.plan(rules: [changed], runID: 2, now: 2000, forceFull: nil).modes["IAP-001"]?.isIncremental
                == false)
        let overridden = IncrementalPlanner(
            store: store, referenceCurrency: "USD", paramOverrides: ["IAP-001": ["min_credits": .integer(3)]])
        #expect(
            try overridden.plan(rules: [rule], runID: 2, now: 2000, forceFull: nil).modes["IAP-001"]?.isIncremental
                == false)
        stats.pricedAtNow = 1
        try planner.record(RuleRunResult(stats: [stats]), rules: [rule], runID: 2, now: 2000)
        #expect(
            try planner.plan(rules: [rule], runID: 3, now: 3000, forceFull: nil).modes["IAP-001"]?.isIncremental
                == false)
    }

    /// The pipeline commits the scope before the rule stage (so that readers run the scoped queries): that
    /// plan leaves the FX rates unseen until the stage's own transaction records them, and the keys a killed
    /// run left committed are deleted by the next plan, not read.
    @Test func aPlanCommittedBeforeItsStageLeavesTheRatesUnseenAndItsScopeIsRebuiltByTheNextPlan() throws {
        let rule = try Self.rule("IAP-001")
        let store = try Self.store([])
        let planner = Self.planner(store)
        _ = try planner.plan(rules: [rule], runID: 1, now: 1000, forceFull: nil)
        let stats = RuleRunResult.RuleStats(ruleID: rule.id, ruleVersion: rule.version, ruleStatus: rule.status)
        try planner.record(RuleRunResult(stats: [stats]), rules: [rule], runID: 1, now: 1000)
        try store.database.run(
            "INSERT INTO ref_fx_rate (currency, rate_date, per_eur, source) VALUES ('JPY', 500, 160.5, 'test')", [])
        try store.database.run(
            "INSERT INTO incremental_scope (rule_id, kind, scope_key) VALUES (?, 'transaction_id', 'left-by-a-kill')",
            [.text(rule.id)])
        let plan = try planner.plan(rules: [rule], runID: 2, now: 2000, forceFull: nil, remembersFX: false)
        #expect(plan.modes[rule.id]?.isIncremental == true)
        #expect(try planner.fxChangedFrom() == 500)
        let keys = try store.database.query("SELECT scope_key FROM incremental_scope", []).compactMap {
            $0[0].textValue
        }
        #expect(!keys.contains("left-by-a-kill"))
        try planner.rememberFXRates()
        #expect(try planner.fxChangedFrom() == nil)
    }

    @Test func aRuleFollowingSharedKeysIsWidenedOrRunsFullyWhenTooManyPurchasesShareThem() throws {
        let store = try ScopeClosureTests.refundOfT1()
        var planner = Self.planner(store)
        func stats(_ rule: Rule) -> RuleRunResult {
            RuleRunResult(stats: [.init(ruleID: rule.id, ruleVersion: rule.version, ruleStatus: rule.status)])
        }
        // The catalog's IAP-001 follows no shared kind: the refund scopes T1, not u-1's other purchase T2.
        let catalog = try Self.rule("IAP-001")
        #expect(catalog.incremental?.sharedKeys.isEmpty == true)
        try planner.record(stats(catalog), rules: [catalog], runID: 1, now: 1000)
        let narrow = try planner.plan(rules: [catalog], runID: 2, now: 2000, forceFull: nil)
        #expect(narrow.scopes["IAP-001"]?.keys[.transactionID] == ["T1"])
        // Following users, it gets T2 as well.
        var following = catalog
        following.incremental?.sharedKeys = [.userID]
        try planner.record(stats(following), rules: [following], runID: 1, now: 1000)
        let widened = try planner.plan(rules: [following], runID: 2, now: 2000, forceFull: nil)
        #expect(widened.scopes["IAP-001"]?.keys[.transactionID] == ["T1", "T2"])
        // When as many rows as the limit carry the scope's users, it runs fully instead.
        planner.minimumWidenLimit = 3
        let full = try planner.plan(rules: [following], runID: 2, now: 2000, forceFull: nil)
        #expect(full.modes["IAP-001"] == .full(reason: "3+ purchases share the scope's user_id: cheaper in full"))
        #expect(full.scopes["IAP-001"] == nil)
    }

    /// A rule whose shared keys the changed rows alone already spread past the limit is told before the
    /// scope is built (its full query can start meanwhile), with the reason the widening would give.
    @Test func aRuleTheChangedRowsAlreadySpreadTooWideIsToldBeforeTheScope() throws {
        let store = try ScopeClosureTests.world()
        var planner = Self.planner(store)
        var following = try Self.rule("IAP-001")
        following.incremental?.sharedKeys = [.userID]
        let catalog = try Self.rule("IAP-002")
        let stats = RuleRunResult(
            stats: [following, catalog].map {
                .init(ruleID: $0.id, ruleVersion: $0.version, ruleStatus: $0.status)
            })
        try planner.record(stats, rules: [following, catalog], runID: 1, now: 1000)
        // o-1 changed: its user u-1 carries two orders and two credits.
        try store.database.run("UPDATE backend_order SET last_run_id = 2 WHERE order_id = 'o-1'")
        planner.minimumWidenLimit = 5
        #expect(try planner.fullBeforeScope(rules: [following, catalog], now: 2000, forceFull: nil).isEmpty)
        planner.minimumWidenLimit = 3
        let early = try planner.fullBeforeScope(rules: [following, catalog], now: 2000, forceFull: nil)
        let reason = "3+ purchases share the scope's user_id: cheaper in full"
        #expect(early == ["IAP-001": reason])
        let plan = try planner.plan(rules: [following, catalog], runID: 2, now: 2000, forceFull: nil, decided: early)
        #expect(plan.modes["IAP-001"] == .full(reason: reason))
        #expect(plan.modes["IAP-002"]?.isIncremental == true)
        // A rebuild runs everything fully anyway: nothing to tell early.
        #expect(try planner.fullBeforeScope(rules: [following], now: 2000, forceFull: "--full-rebuild").isEmpty)
    }

    /// IAP-012 judges a credit by who holds its token: another user's order carrying the token brings the
    /// token's credited purchases into its scope; the holder's own new order does not.
    @Test func theTokenOwnerRuleFollowsAnotherUsersOrderButNotTheHoldersOwn() throws {
        let rule = try Self.rule("IAP-012")
        func creditsInScope(newOrderBy user: String) throws -> Set<String>? {
            let store = try ScopeClosureTests.heldTokenWorld()
            let planner = Self.planner(store)
            try planner.record(
                RuleRunResult(stats: [.init(ruleID: rule.id, ruleVersion: rule.version, ruleStatus: rule.status)]),
                rules: [rule], runID: 1, now: 1000)
            try ScopeClosureTests.addOrder(store, "o-9", user: user)
            let plan = try planner.plan(rules: [rule], runID: 2, now: 2000, forceFull: nil)
            #expect(plan.modes["IAP-012"]?.isIncremental == true)
            return plan.scopes["IAP-012"]?.keys[.creditID]
        }
        #expect(try creditsInScope(newOrderBy: "u-5")?.isSuperset(of: ["c-1", "c-2"]) == true)
        #expect(try (creditsInScope(newOrderBy: "u-1") ?? []).isDisjoint(with: ["c-1", "c-2"]))
    }

    @Test func sharedKeysDefaultToEveryKindAndTheCatalogNamesOnlyThoseItsRulesRead() throws {
        let text = Self.scopedRuleText
        func parsed(_ block: String) throws -> Set<ScopeKind>? {
            try RuleParser(file: "x.yaml").parse(text + "\nincremental: {key: credit_id, kind: credit_id\(block)}\n")
                .incremental?.sharedKeys
        }
        #expect(try parsed("") == Set(ScopeKind.sharedKinds))
        #expect(try parsed(", shared_keys: []") == [])
        #expect(try parsed(", shared_keys: [user_id, app_transaction_id]") == [.userID, .appTransactionID])
        #expect(throws: RuleLoadError.self) { try parsed(", shared_keys: [receipt_key]") }
        #expect(throws: RuleLoadError.self) { try parsed(", shared_keys: user_id") }
        func byHolders(_ block: String) throws -> Bool? {
            try RuleParser(file: "x.yaml").parse(text + "\nincremental: {key: credit_id, kind: credit_id\(block)}\n")
                .incremental?.sharedByHolders
        }
        #expect(try byHolders("") == false)
        #expect(try byHolders(", shared_keys: [app_account_token], shared_by: holders") == true)
        #expect(try byHolders(", shared_keys: [app_account_token], shared_by: purchases") == false)
        // Holders are defined for markers accounts hold, not for users or Apple Accounts.
        #expect(throws: RuleLoadError.self) { try byHolders(", shared_keys: [user_id], shared_by: holders") }
        #expect(throws: RuleLoadError.self) { try byHolders(", shared_by: holders") }
        #expect(throws: RuleLoadError.self) { try byHolders(", shared_keys: [], shared_by: owners") }
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { root.deleteLastPathComponent() }
        let (rules, _) = RuleSet.load(from: root.appendingPathComponent("rules"))
        for rule in rules {
            guard let incremental = rule.incremental else { continue }
            // IAP-012 judges a credit by the owner of its token or username, which other orders decide.
            let expected: Set<ScopeKind> = rule.id == "IAP-012" ? [.appAccountToken, .applicationUsername] : []
            #expect(incremental.sharedKeys == expected, "\(rule.id)")
            // ...and only through who holds the marker; its evidence lists the orders carrying the marker, so
            // its standing findings are evaluated again on every run.
            #expect(incremental.sharedByHolders == (rule.id == "IAP-012"), "\(rule.id)")
            if rule.id == "IAP-012" { #expect(incremental.reevaluatesOpenFindings) }
        }
    }

    @Test func scopeMacrosExpandToTrueInFullModeAndAreValidated() throws {
        let template =
            "SELECT 1 FROM credits c WHERE {{scope credit_id: c.credit_id}} AND {{ scope user_id : c.user_id }}"
        #expect(try RuleIncremental.fullQuery(template) == "SELECT 1 FROM credits c WHERE 1 = 1 AND 1 = 1")
        #expect(try RuleIncremental.macroKinds(in: template) == [.creditID, .userID])
        #expect(throws: RuleIncremental.MacroError.self) { try RuleIncremental.fullQuery("WHERE {{scope nope: x}}") }
        #expect(throws: RuleIncremental.MacroError.self) { try RuleIncremental.fullQuery("WHERE {{scope user_id: x") }
        let text = Self.scopedRuleText
        #expect(throws: RuleLoadError.self) { try RuleParser(file: "x.yaml").parse(text) }
        let parsed = try RuleParser(file: "x.yaml").parse(text + "\nincremental: {key: credit_id, kind: credit_id}\n")
        #expect(parsed.query == "SELECT credit_id FROM credits c WHERE 1 = 1\n")
        #expect(parsed.incremental?.scopedQuery(ruleID: "X-1").contains("incremental_scope") == true)
        #expect(throws: RuleLoadError.self) {
            try RuleParser(file: "x.yaml").parse(text + "\nincremental: {key: user_id, kind: credit_id}\n")
        }
        #expect(parsed.incremental?.reevaluatesOpenFindings == false)
        let reevaluating = try RuleParser(file: "x.yaml").parse(
            text + "\nincremental: {key: credit_id, kind: credit_id, reevaluate_open_findings: true}\n")
        #expect(reevaluating.incremental?.reevaluatesOpenFindings == true)
        #expect(throws: RuleLoadError.self) {
            try RuleParser(file: "x.yaml").parse(
                text + "\nincremental: {key: credit_id, kind: credit_id, reevaluate_open_findings: maybe}\n")
        }
        // :previous_now is the engine's, bound in time queries: a rule cannot declare it.
        #expect(throws: RuleLoadError.self) {
            try RuleParser(file: "x.yaml").parse(
                text + "\nincremental: {key: credit_id, kind: credit_id}\nparams: {previous_now: 1}\n")
        }
    }
}
