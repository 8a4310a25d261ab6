import Foundation
import Logging
import Testing

@testable import IAPGuard
@testable import IAPGuardSampleWorld

@Suite("Evidence queries")
struct EvidenceQueryTests {
    static let rulesFolder = Fixtures.repoRoot.appendingPathComponent("rules")

    // MARK: Stored JSON

    @Test func evidenceJSONIsByteIdenticalToJSONEncoder() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let hostile = [
            "", "plain", "a/b", "quote\"d", "back\\slash", "tab\there", "line\nbreak", "cr\r", "\u{0}nul", "\u{1F}",
            "\u{7F}del", "é", "日本", "🙂", "\u{202E}rlo", "\u{2028}ls", "</script>", "=1+1", "'single'",
        ]
        let rows = hostile.enumerated().map { index, text in
            EvidenceRow(
                kind: text,
                fields: [
                    EvidenceField(name: text, value: text), EvidenceField(name: "n\(index)", value: nil),
                    EvidenceField(name: "credited_at", value: "1780000000000"),
                ])
        }
        let json = EvidenceJSON()
        #expect(try json.encode(rows) == String(decoding: try encoder.encode(rows), as: UTF8.self))
        #expect(
            try json.encode([EvidenceRow]()) == String(decoding: try encoder.encode([EvidenceRow]()), as: UTF8.self))
        for row in rows {
            #expect(try json.encode(row.fields) == String(decoding: try encoder.encode(row.fields), as: UTF8.self))
            #expect(try json.encode([row]) == String(decoding: try encoder.encode([row]), as: UTF8.self))
        }
        let decoded = try JSONDecoder().decode([EvidenceRow].self, from: Data(try json.encode(rows).utf8))
        #expect(decoded == rows)
        #expect(json.decodeRows(try json.encode(rows)) == rows)
        for row in rows { #expect(json.decodeFields(try json.encode(row.fields)) == row.fields) }
        #expect(json.decodeFields("{}") == nil)
        #expect(json.decodeFields(#"[{"value":"x"}]"#) == nil)
    }

    @Test func storedEvidenceReadsBackAsJSONDecoderReadsIt() throws {
        let json = EvidenceJSON()
        let cases = [
            "[]", #"[{"fields":[],"kind":"hit"}]"#,
            #"[{"kind":"credit","fields":[{"value":"u\/1","name":"user_id"},{"name":"reversed_at"}]}]"#,
            #"[{"fields":[{"name":"a","value":null}],"kind":"k"}]"#,
            #"[{"fields":[{"name":"\u00e9\n","value":"\ud83d\ude42"}],"kind":"k"}]"#,
        ]
        for text in cases {
            let expected = try JSONDecoder().decode([EvidenceRow].self, from: Data(text.utf8))
            #expect(json.decodeRows(text) == expected, "\(text)")
        }
        // Not the stored shape or not JSON: no answer, so the caller falls back to JSONDecoder.
        for text in ["", "{}", "[1]", #"[{"fields":[]}]"#, #"[{"fields":[{"value":"x"}],"kind":"k"}]"#, "[{]"] {
            #expect(json.decodeRows(text) == nil, "\(text)")
        }
    }

    // MARK: Prepared evidence queries

    @Test func preparedEvidenceQueriesStopAtTheLimitAndReleaseTheStatement() throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.database.execute(
            "CREATE TABLE t (k TEXT, v INTEGER); INSERT INTO t VALUES ('a', 1), ('a', 2), ('a', 3), ('b', 4)")
        let runner = EvidenceQueryRunner(store: store)
        let sql = "SELECT v, k FROM t WHERE k = :k ORDER BY v"
        var seen: [[SQLValue]] = []
        try runner.run(sql, parameters: ["k": .text("a")], limit: 2) { columns, row in
            #expect(columns == ["v", "k"])
            seen.append(row)
        }
        #expect(seen == [[.integer(1), .text("a")], [.integer(2), .text("a")]])
        // The same prepared statement, re-bound.
        seen = []
        try runner.run(sql, parameters: ["k": .text("b"), "unused": .integer(9)], limit: 5) { _, row in
            seen.append(row)
        }
        #expect(seen == [[.integer(4), .text("b")]])
        // Stopped mid-result above, the statement was reset: the table can be dropped (an active statement
        // would make this fail with "database table is locked").
        try runner.run(sql, parameters: ["k": .text("a")], limit: 1) { _, _ in }
        try store.database.execute("DROP TABLE t")
        #expect(throws: (any Error).self) {
            try runner.run("SELECT v FROM t WHERE k = :missing", parameters: [:], limit: 1) { _, _ in }
        }
    }

    /// One Apple Account with three purchases: one refunded (notification), one refunded then reversed,
    /// one kept; and another account's refund.
    static func refundWorld() throws -> LookupTestWorld {
        var w = try LookupTestWorld()
        let day = LookupTestWorld.day
        let now = LookupTestWorld.now
        for (index, tx) in ["1000000000000101", "1000000000000102", "1000000000000103"].enumerated() {
            w.purchase(tx, user: "u-payer", order: "o-\(tx)", at: now - Int64(20 - index) * day, appleAccount: "A-1")
        }
        w.purchase("1000000000000199", user: "u-other", order: "o-other", at: now - 9 * day, appleAccount: "A-2")
        w.notification("n-1", type: "REFUND", tx: "1000000000000101", at: now - 5 * day, revokedAt: now - 5 * day)
        w.notification("n-2", type: "REFUND", tx: "1000000000000102", at: now - 4 * day, revokedAt: now - 4 * day)
        w.notification("n-3", type: "REFUND_REVERSED", tx: "1000000000000102", at: now - 3 * day)
        w.notification("n-4", type: "REFUND", tx: "1000000000000199", at: now - 2 * day, revokedAt: now - 2 * day)
        try w.commit(runRules: false)
        return w
    }

    static func tempTables(_ store: SQLiteStore) throws -> [String] {
        try store.database.query("SELECT name FROM sqlite_temp_master WHERE type = 'table' ORDER BY name")
            .compactMap { $0.first?.textValue }
    }

    /// IAP-016's payer-refund evidence asks the `refunds` view for each of an account's transactions from a
    /// correlated subquery, which SQLite cannot push into the view: the runner reads it from a copy.
    @Test func aViewSQLiteComputesWholeIsReadOncePerRunnerWithTheSameRows() throws {
        let w = try Self.refundWorld()
        let (rules, _) = RuleSet.load(from: Self.rulesFolder)
        let query = try #require(
            rules.first { $0.id == "IAP-016" }?.evidenceQueries.first { $0.kind == "payer-refund" })
        let parameters: [String: SQLValue] = [
            "app_transaction_id": .text("A-1"), "now": .integer(LookupTestWorld.now),
        ]
        var direct: [[SQLValue]] = []
        try w.store.query(query.sql, parameters: parameters) { _, row in direct.append(row) }
        #expect(direct.map { $0[0] } == [.text("1000000000000101")])

        let runner = EvidenceQueryRunner(store: w.store)
        var viaRunner: [[SQLValue]] = []
        try runner.run(query.sql, parameters: parameters, limit: query.limit) { _, row in viaRunner.append(row) }
        #expect(viaRunner == direct)
        #expect(try Self.tempTables(w.store) == ["refunds"])
        var plan: [String] = []
        try w.store.database.query("EXPLAIN QUERY PLAN " + query.sql, named: parameters) { _, row in
            if let detail = row.last?.textValue { plan.append(detail) }
        }
        #expect(!plan.contains { $0.contains("CO-ROUTINE refunds") }, "\(plan)")
        #expect(plan.contains { $0.contains("USING INDEX refunds_transaction_id") }, "\(plan)")

        runner.close()
        #expect(try Self.tempTables(w.store).isEmpty)
        var afterClose: [[SQLValue]] = []
        try w.store.query(query.sql, parameters: parameters) { _, row in afterClose.append(row) }
        #expect(afterClose == direct)
    }

    @Test func theEngineDropsItsCopiesWhenAnEvaluationEnds() throws {
        let w = try Self.refundWorld()
        let (rules, _) = RuleSet.load(from: Self.rulesFolder)
        let engine = RuleEngine(store: w.store, referenceCurrency: "USD")
        engine.usesStoredFindings = false
        _ = try engine.evaluate(rules: rules.filter { $0.id == "IAP-016" }, runID: 1, now: LookupTestWorld.now)
        #expect(try Self.tempTables(w.store).isEmpty)
    }

    @Test func aViewIsNamedOnlyAsAWholeWord() {
        #expect(EvidenceQueryRunner.names("refunds", in: "SELECT 1 FROM refunds r"))
        #expect(EvidenceQueryRunner.names("refunds", in: "FROM REFUNDS"))
        #expect(EvidenceQueryRunner.names("refunds", in: "(SELECT MAX(x) FROM refunds\nWHERE"))
        #expect(!EvidenceQueryRunner.names("refunds", in: "SELECT refunds_count FROM findings"))
        #expect(!EvidenceQueryRunner.names("refunds", in: "SELECT 1 FROM my_refunds"))
        #expect(!EvidenceQueryRunner.names("refunds", in: "refund"))
    }

    @Test func shippedEvidenceQueriesAreIndexLookups() throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        let (rules, errors) = RuleSet.load(from: Self.rulesFolder)
        #expect(errors.isEmpty, "\(errors)")
        var checked = 0
        for rule in rules {
            for query in rule.evidenceQueries {
                let plan = try store.database.query("EXPLAIN QUERY PLAN " + query.sql).compactMap { $0.last?.textValue }
                // `SCAN refunds` iterates the co-routine of the refunds view (a UNION ALL) after the key lookup
                // was pushed into its branches, `SCAN refunded` the co-routine of its reversals' notification
                // subquery (migration 22) after the same push; any other SCAN reads a whole table or index.
                let scans = plan.filter {
                    $0.hasPrefix("SCAN ") && !$0.hasPrefix("SCAN CONSTANT") && !$0.hasPrefix("SCAN refunds")
                        && !$0.hasPrefix("SCAN refunded")
                }
                #expect(scans.isEmpty, "\(rule.id) \(query.kind) scans a table: \(plan)")
                checked += 1
            }
        }
        #expect(checked >= 24)
    }

    // MARK: Same rows as before

    /// Evidence SQL of IAP-002 and IAP-009 before they were split into index-friendly forms (IAP-009's with
    /// the order's storefront, currency and price for a purchase Apple's record gives none of, as it now reads).
    static let previousSQL: [String: String] = [
        "IAP-002": """
        SELECT c.credit_id, c.transaction_id, c.user_id, c.order_id, c.units, c.credited_at, c.reversed_at
        FROM credits c LEFT JOIN transactions t ON t.transaction_id = c.transaction_id
        WHERE c.transaction_id = :shared_id OR t.original_transaction_id = :shared_id
        ORDER BY c.credited_at
        """,
        "IAP-009": """
        SELECT t.transaction_id,
               CASE WHEN :subject_kind = 'user_id' THEN COALESCE(t.storefront, o.storefront) ELSE t.storefront END
                 AS storefront,
               CASE WHEN :subject_kind = 'user_id' AND t.price IS NULL THEN o.currency ELSE t.currency END AS currency,
               CASE WHEN :subject_kind = 'user_id' THEN COALESCE(t.price, o.price) ELSE t.price END AS price,
               t.purchase_date
        FROM transactions t LEFT JOIN orders o ON o.transaction_id = t.transaction_id
        WHERE (:subject_kind = 'user_id' AND o.user_id = :subject)
           OR (:subject_kind = 'app_account_token' AND LOWER(t.app_account_token) = :subject)
        ORDER BY t.purchase_date
        """,
    ]

    /// A generated world run through the pipeline: every stored finding of the rules whose evidence plans
    /// changed has the evidence rows the previous SQL gives on a copy of the store without the new indexes
    /// (the plans of before: same rows, same order, same limit).
    @Test func evidenceRowsMatchThePreviousQueriesOnAGeneratedWorld() throws {
        let dir = TestScratch.root.appendingPathComponent(
            "iapguard-evidence-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let options = WorldGenerator.Options(
            seed: 11, users: 300, days: 20, end: WorldGenerator.defaultEnd, rulesPath: Self.rulesFolder.path)
        _ = try WorldGenerator(options: options).write(to: dir)
        let config = try Config.load(from: dir.appendingPathComponent("iapguard.yml"))
        let summary = try Pipeline(
            config: config, verifier: try JWSVerifier.make(for: config), logger: Logger(label: "test")
        )
        .run(Pipeline.Options(until: WorldGenerator.defaultEnd, failOn: nil))
        #expect(summary.ruleErrors.isEmpty)

        let copy = dir.appendingPathComponent("before-indexes.sqlite").path
        do {
            let store = try SQLiteStore(path: summary.storePath)
            try store.database.execute("VACUUM INTO '\(copy)'")
        }
        let before = try SQLiteStore(path: copy)
        try before.database.execute(
            "DROP INDEX backend_order_token_lower; DROP INDEX backend_order_username; DROP INDEX apple_transaction_token_lower"
        )
        let (rules, _) = RuleSet.load(from: Self.rulesFolder)
        var compared: [String: Int] = [:]
        for rule in rules where ["IAP-002", "IAP-009", "IAP-012", "IAP-013"].contains(rule.id) {
            let queries: [Rule.EvidenceQuery] =
                Self.previousSQL[rule.id].map { sql in
                    [
                        Rule.EvidenceQuery(
                            kind: rule.evidenceQueries[0].kind, sql: sql, limit: rule.evidenceQueries[0].limit, line: 1)
                    ]
                } ?? rule.evidenceQueries
            // The engine binds every column of the hit row; the finding keeps these of them.
            let stored = try before.rows(
                """
                SELECT entity_key, evidence_json, transaction_id, original_transaction_id, order_id, user_id
                FROM findings WHERE rule_id = :r AND status <> 'resolved'
                """,
                ["r": .text(rule.id)])
            for row in stored {
                let key = try JSONDecoder().decode([EvidenceField].self, from: Data((row[0].textValue ?? "").utf8))
                let evidence = try JSONDecoder().decode([EvidenceRow].self, from: Data((row[1].textValue ?? "").utf8))
                var bound = rule.boundParameters(
                    overrides: config.ruleParams[rule.id] ?? [:], now: WorldGenerator.defaultEnd, since: 0,
                    referenceCurrency: config.referenceCurrency)
                for (index, name) in ["transaction_id", "original_transaction_id", "order_id", "user_id"].enumerated() {
                    bound[name] = row[2 + index].textValue.map { .text($0) } ?? .null
                }
                for field in key + evidence.filter({ $0.kind == "hit" }).flatMap(\.fields) {
                    bound[field.name] = field.value.map { .text($0) } ?? .null
                }
                var expected = evidence.filter { $0.kind == "hit" }
                for query in queries {
                    var count = 0
                    try before.query(query.sql, parameters: bound) { columns, values in
                        guard count < query.limit else { return }
                        count += 1
                        expected.append(
                            EvidenceRow(
                                kind: query.kind,
                                fields: zip(columns, values).map { EvidenceField(name: $0, value: $1.textValue) }))
                    }
                }
                #expect(evidence == expected, "\(rule.id) \(key)")
                compared[rule.id, default: 0] += 1
            }
        }
        #expect(compared.values.reduce(0, +) > 0, "no findings of the rules compared: \(compared)")
    }
}
