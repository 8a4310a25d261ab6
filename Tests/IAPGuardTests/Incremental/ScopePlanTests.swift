import Foundation
import Testing

@testable import IAPGuard

/// The dirty scope must cost in proportion to the change, not to the store: every statement
/// `ScopeBuilder` runs looks its rows up through an index (schema migrations 4 and 6), none reads a whole
/// table. At 10 million purchases one table scan per statement would take minutes a run.
@Suite struct ScopePlanTests {
    /// Forwards to a SQLite connection and keeps every statement `run` was given, with its parameters.
    final class RecordingExecutor: SQLExecutor {
        let base: SQLiteDatabase
        var statements: [(sql: String, parameters: [SQLValue])] = []

        init(_ base: SQLiteDatabase) { self.base = base }

        var dialect: SQLDialect { base.dialect }
        func execute(_ sql: String) throws { try base.execute(sql) }
        func run(_ sql: String, _ parameters: [SQLValue]) throws -> Int {
            statements.append((sql, parameters))
            return try base.run(sql, parameters)
        }
        func query(_ sql: String, _ parameters: [SQLValue]) throws -> [[SQLValue]] {
            statements.append((sql, parameters))
            return try base.query(sql, parameters)
        }
        func query(
            _ sql: String, named parameters: [String: SQLValue], _ body: ([String], [SQLValue]) throws -> Void
        ) throws {
            try base.query(sql, named: parameters, body)
        }
        func transaction<T>(_ body: () throws -> T) throws -> T { try base.transaction(body) }
        func columnNames(of relation: String) throws -> [String] { try base.columnNames(of: relation) }
    }

    /// The store's own tables: a `SCAN` of one of them reads it whole. (`incremental_scope` is the scope
    /// itself, read by its primary key.)
    static let storeTables = [
        "apple_transaction", "apple_sighting", "backend_order", "credit", "notification", "change_log",
    ]

    /// Ranges that select the change: rows of later runs, or dated from a changed FX rate on.
    static let changeRanges = ["last_run_id>?", "first_run_id>?", "run_id>?", "purchase_date>?", "credited_at>?"]

    /// Whether a plan line reads only the rows it needs: any line about another table, or a `SEARCH` of a
    /// store table by equality or by a change range. A `SCAN`, or a `SEARCH` by another range — SQLite turns
    /// `k IS NOT NULL` into `k>?` over an index on `k`, which reads the whole index — is not.
    static func isLookup(_ line: String) -> Bool {
        guard let table = storeTables.first(where: { line.hasPrefix("SCAN \($0)") || line.hasPrefix("SEARCH \($0) ") })
        else { return true }
        guard line.hasPrefix("SEARCH \(table) "), let open = line.lastIndex(of: "(") else { return false }
        let condition = line[open...]
        return condition.contains("=") || changeRanges.contains { condition.contains($0) }
    }

    /// An empty migrated in-memory store and the rules shipped in `rules/` (which must all load).
    static func migratedStoreAndShippedRules() throws -> (SQLiteStore, [Rule]) {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("rules")
        let (rules, errors) = RuleSet.load(from: folder)
        #expect(errors.isEmpty, "\(errors)")
        return (store, rules)
    }

    /// The shipped rules' time queries, limited as the planner runs them, read credits through the
    /// `reversed_at` index. (Not yet the `refunds` view: IAP-015's and IAP-016's moments shifted by a grace
    /// period or window, `event_date + …`, are no index range, and the notification half's `event_date` is
    /// `COALESCE(revocation_date, signed_date)`; those still read `notification` and revoked transactions.)
    @Test func shippedTimeQueriesReadCreditsAndRefundsByIndex() throws {
        let (store, rules) = try Self.migratedStoreAndShippedRules()
        var checked = 0
        for rule in rules {
            for query in rule.incremental?.timeQueries ?? [] {
                var parameters = rule.boundParameters(
                    overrides: [:], now: 1_800_000_000_000, since: 0, referenceCurrency: "EUR")
                parameters["previous_now"] = .integer(1_799_900_000_000)
                var plan: [String] = []
                try store.database.query(
                    "EXPLAIN QUERY PLAN " + IncrementalPlanner.timeQuerySQL(query), named: parameters
                ) { _, row in
                    if let line = row.last?.textValue { plan.append(line) }
                }
                let scans = plan.filter { $0 == "SCAN credit" || $0.hasPrefix("SCAN credit ") }
                #expect(scans.isEmpty, "\(rule.id) time query reads a whole table: \(plan)")
                // The `refunds` view's transaction half: revoked transactions by index, not every
                // transaction of a verification outcome (nearly all of them) or the whole table.
                let transactionReads = plan.filter {
                    $0 == "SCAN apple_transaction" || $0.hasPrefix("SCAN apple_transaction ")
                        || ($0.hasPrefix("SEARCH apple_transaction ") && $0.hasSuffix("(verification=?)"))
                }
                #expect(transactionReads.isEmpty, "\(rule.id) time query reads every transaction: \(plan)")
                checked += 1
            }
        }
        #expect(checked >= 14)
    }

    /// The whole tables the shipped rules' scoped queries still read: none. (IAP-014 and IAP-015 read the
    /// `refunds` view's notification half through the `(notification_type, transaction_id)` index of
    /// migration 13.)
    static let scopedQueryScans: [String: Set<String>] = [:]

    /// Partial indexes whose scan reads only the rows they hold: the renewals (migration 25).
    static let partialIndexes = ["apple_transaction_renewal"]

    /// A daily run evaluates the shipped rules' scoped queries: apart from the reads listed in
    /// ``scopedQueryScans``, they reach the store's tables through indexes. In particular a macro on
    /// `LOWER(app_account_token)` looks the scoped tokens up in that expression index (IAP-009 and IAP-013
    /// read every transaction while the scope's keys were compared with `TEXT` affinity), and IAP-017 finds
    /// the transactions and sightings outside Production through migration 9's partial indexes. IAP-014 looks
    /// the scope's transactions up instead of walking the `(verification, revocation_date)` index, and counts
    /// each app's renewals through migration 25's partial index.
    @Test func shippedScopedQueriesReadStoreTablesThroughIndexes() throws {
        let (store, rules) = try Self.migratedStoreAndShippedRules()
        var tokenMacros = 0
        var checkedEnvironment = false
        var checkedMissingCredit = false
        for rule in rules {
            guard let incremental = rule.incremental else { continue }
            let parameters = rule.boundParameters(
                overrides: [:], now: 1_800_000_000_000, since: 0, referenceCurrency: "EUR")
            var plan: [String] = []
            try store.database.query(
                "EXPLAIN QUERY PLAN " + incremental.scopedQuery(ruleID: rule.id), named: parameters
            ) { _, row in
                if let line = row.last?.textValue { plan.append(line) }
            }
            // A scan of a partial index reads only the few rows it holds (the renewals), not the table.
            let scanned = Set(
                plan.compactMap { line in
                    Self.storeTables.first { line == "SCAN \($0)" || line.hasPrefix("SCAN \($0) ") }
                        .flatMap { table in
                            Self.partialIndexes.contains { line == "SCAN \(table) USING INDEX \($0)" } ? nil : table
                        }
                })
            #expect(scanned == Self.scopedQueryScans[rule.id, default: []], "\(rule.id) reads whole tables: \(plan)")
            if rule.id == "IAP-017" {
                checkedEnvironment = true
                for table in ["apple_transaction", "apple_sighting"] {
                    #expect(
                        plan.contains { $0.hasPrefix("SEARCH \(table) USING INDEX \(table)_test_environment") },
                        "IAP-017 does not search \(table) by its partial index: \(plan)")
                }
            }
            if rule.id == "IAP-014" {
                checkedMissingCredit = true
                #expect(
                    plan.first?.hasSuffix(
                        "apple_transaction USING INDEX sqlite_autoindex_apple_transaction_1 (transaction_id=?)")
                        == true, "IAP-014 does not start from the scope's transactions: \(plan)")
                #expect(
                    plan.contains("SCAN apple_transaction USING INDEX apple_transaction_renewal"),
                    "IAP-014 does not count the renewals through their partial index: \(plan)")
            }
            if incremental.template.contains("app_account_token: LOWER(") {
                tokenMacros += 1
                #expect(
                    plan.contains { $0.contains("USING INDEX apple_transaction_token_lower (<expr>=?)") },
                    "\(rule.id) does not look tokens up by index: \(plan)")
            }
        }
        #expect(tokenMacros >= 2)
        #expect(checkedEnvironment)
        #expect(checkedMissingCredit)
    }

    /// The summary's store counts, run on every run, read indexes only: no plan line reads a store table
    /// itself (a `SCAN … USING COVERING INDEX` reads the much smaller index).
    @Test func storeCountsReadIndexesNotTables() throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        for sql in StoreCounts.statements {
            let plan = try store.database.query("EXPLAIN QUERY PLAN " + sql).compactMap { $0.last?.textValue }
            // `refunds` reads the notifications (one row per notification, a small table) and the revoked
            // transactions through their index.
            let tableReads = plan.filter { line in
                Self.storeTables.filter { $0 != "notification" }.contains { line == "SCAN \($0)" }
            }
            #expect(tableReads.isEmpty, "\(sql) reads a whole table: \(plan)")
        }
    }

    /// What the store holds from each source, read for every report: the counts walk an index, the latest
    /// times are one index probe per source; no statement reads a record table itself.
    @Test func sourceStatisticsReadIndexesNotTables() throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        for (table, time) in Pipeline.sourceTables {
            let count = try store.database.query("EXPLAIN QUERY PLAN " + Pipeline.sourceCountSQL(table))
                .compactMap { $0.last?.textValue }
            #expect(count.allSatisfy { $0.contains("USING COVERING INDEX") }, "\(table) count: \(count)")
            let latest = try store.database.query(
                "EXPLAIN QUERY PLAN " + Pipeline.sourceLatestSQL(table, time), [.text("receipts")]
            ).compactMap { $0.last?.textValue }
            #expect(
                latest.allSatisfy { $0.hasPrefix("SEARCH") && $0.contains("INDEX") }, "\(table) latest: \(latest)")
        }
    }

    @Test(arguments: [nil, Int64(1_700_000_000_000)])
    func everyScopeStatementIsAnIndexLookup(fxChangedFrom: Int64?) throws {
        // A changed transaction with an app account token and a receipt, so that every lookup has keys to run
        // with (the closure runs none for a kind it holds no keys of).
        let store = try ScopeClosureTests.world()
        try ScopeClosureTests.add(
            [
                (
                    "sightings",
                    [
                        [
                            "transaction_id": .text("T1"), "original_transaction_id": .text("O1"),
                            "receipt_key": .text("R1"), "submitted_by_user_id": .text("u-1"),
                        ]
                    ]
                )
            ], to: store)
        try store.database.run("UPDATE apple_transaction SET last_run_id = 2 WHERE transaction_id = 'T1'")
        let recorder = RecordingExecutor(store.database)
        let builder = ScopeBuilder(database: recorder)
        try builder.build(sinceRunID: 1, fxChangedFrom: fxChangedFrom)
        // And a rule's widening by every shared kind, with its row-count probes.
        #expect(try builder.widen(ruleID: "R", kinds: Set(ScopeKind.sharedKinds), limit: 1_000))
        // The closure's seeds, the widening's inserts and row-count probes, and every lookup of the closure
        // (a lookup the rows already read answer does not run).
        let lookups = (ScopeClosure.fanOut + ScopeClosure.backToTransactions).flatMap {
            ScopeClosure.bodies($0, keys: ["k1", "k2"]).map { (sql: $0.sql, parameters: $0.parameters) }
        }
        let statements =
            recorder.statements.filter { statement in
                Self.storeTables.contains { statement.sql.contains(" FROM \($0) WHERE ") }
            } + lookups
        #expect(lookups.count == 14)
        #expect(statements.contains { $0.sql.contains("FROM apple_sighting WHERE first_run_id > ?") })
        #expect(statements.contains { $0.sql.contains("FROM apple_sighting WHERE receipt_key IN (?") })
        #expect(statements.contains { $0.sql.contains("LOWER(app_account_token) IN (?)") })
        #expect(statements.contains { $0.sql.contains("LIMIT ?) probe") })
        for statement in statements {
            let plan = try store.database.query("EXPLAIN QUERY PLAN " + statement.sql, statement.parameters)
                .compactMap { $0.last?.textValue }
            let scans = plan.filter { !Self.isLookup($0) }
            #expect(scans.isEmpty, "reads a whole table or index: \(scans)\n\(statement.sql)")
        }
    }
}
