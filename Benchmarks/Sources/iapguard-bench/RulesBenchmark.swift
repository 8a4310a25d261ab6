import Foundation
import IAPGuard

/// Rules stage: each rule's query time over the ingested store (run `ingest` first), a hand-written query
/// for IAP-001 with the pragmas the issue warns about, and DuckDB (2 threads) running the same rule SQL over
/// the same views exported to Parquet.
enum RulesBenchmark {
    static func run(_ options: BenchOptions) throws {
        let config = try BenchWorld.config(options)
        let path = IngestBenchmark.storePath(options)
        guard FileManager.default.fileExists(atPath: path) else {
            throw BenchError("\(path) does not exist: run the ingest stage first")
        }
        let store = try SQLiteStore(path: path)
        let purchases = try store.database.scalar("SELECT COUNT(*) FROM transactions")?.integerValue ?? 0
        Measure.header("rules", "\(purchases) transactions in \(path)")
        try PageCache.report("rules", path, before: "the queries", warm: options.warmStore)
        guard let rulesDirectory = config.rulesDirectory else { throw BenchError("the world config has no rules") }
        // Every rule's query, each interrupted after --rule-time-limit; the engine's evaluation of each rule
        // except --skip-rules ones.
        let (rules, errors) = RuleSet.load(from: rulesDirectory)
        for error in errors { print("rules   rule file rejected: \(error)") }
        let engine = RuleEngine(
            store: store, referenceCurrency: config.referenceCurrency, paramOverrides: config.ruleParams)
        engine.usesStoredFindings = false

        var ourSeconds: [String: Double] = [:]
        var totalQuery = 0.0
        var totalAll = 0.0
        var findings = 0
        var slow: [String] = []
        var allResults = RuleRunResult()
        for rule in rules {
            // The query alone (every row read), then the engine's whole evaluation of the rule.
            let bound = rule.boundParameters(
                overrides: config.ruleParams[rule.id] ?? [:], now: BenchWorld.now, since: 0,
                referenceCurrency: config.referenceCurrency)
            let raw = RawQuery.run(path: path, sql: rule.query, parameters: bound, limit: options.ruleTimeLimit)
            let query = raw.seconds
            if raw.timedOut {
                slow.append(rule.id)
                Measure.line(
                    "rules", "\(rule.id) \(rule.title.prefix(44))",
                    String(format: "query did not finish in %.0f s (interrupted); left out below", query))
                continue
            }
            let queryError = raw.error.map { "  ERROR \($0.prefix(80))" } ?? ""
            let rows = raw.rows
            if options.skipRules.contains(rule.id) {
                // --skip-rules: the query is timed, the engine's evaluation (evidence queries) is not run.
                ourSeconds[rule.id] = query
                totalQuery += query
                Measure.line(
                    "rules", "\(rule.id) \(rule.title.prefix(44))",
                    String(format: "query %8.3f s  %7d rows  (evaluation skipped: --skip-rules)", query, rows)
                        + queryError)
                continue
            }
            let (result, seconds) = try Measure.time {
                try engine.evaluate(rules: [rule], runID: 1, now: BenchWorld.now)
            }
            ourSeconds[rule.id] = query
            totalQuery += query
            totalAll += seconds
            findings += result.findings.count
            allResults.findings += result.findings
            allResults.stats += result.stats
            Measure.line(
                "rules", "\(rule.id) \(rule.title.prefix(44))",
                String(
                    format: "query %8.3f s  %7d rows  with findings+evidence %8.3f s  %6d findings", query, rows,
                    seconds, result.findings.count) + queryError)
        }
        Measure.line(
            "rules", "all \(rules.count - slow.count) rules that finished",
            String(
                format: "query %8.3f s  with findings+evidence %8.3f s  %6d findings", totalQuery, totalAll, findings))

        try findingStorage(store, result: allResults)
        try findingStorageAtScale(config)
        try handWritten(store)
        try duckDB(options, rules: rules.filter { !slow.contains($0.id) }, config: config, ours: ourSeconds)
        if !slow.isEmpty {
            print("rules   interrupted after \(options.ruleTimeLimit) s: \(slow.joined(separator: ", "))")
        }
        Measure.line("rules", "peak RSS of this stage", Measure.mib(Measure.peakRSS()))
    }

    /// The rest of a rule's cost outside its query, on this run's findings: persisting them (`persist`), reading
    /// them back through the `findings` view, and a second evaluation that reads them as earlier findings
    /// (`storedFindings`). Done inside a transaction that is rolled back, so the bench store keeps no findings.
    static func findingStorage(_ store: SQLiteStore, result: RuleRunResult) throws {
        let engine = RuleEngine(store: store, referenceCurrency: "USD")
        try store.database.execute("BEGIN")
        defer { try? store.database.execute("ROLLBACK") }
        let (_, persist) = try Measure.time { try engine.persist(result, runID: 1) }
        let (rows, read) = try Measure.time { try store.rows("SELECT * FROM findings").count }
        Measure.line(
            "rules", "persist \(result.findings.count) findings / read the findings view",
            String(format: "persist %8.3f s  read %8.3f s (%d rows)", persist, read, rows))
    }

    /// The same at the report stage's scale: 100,000 synthetic findings (20 rule ids, 3 evidence rows each)
    /// persisted into an in-memory store, read back through the `findings` view, then read as earlier findings
    /// by one evaluation per rule id whose query finds nothing (so every earlier finding becomes resolved:
    /// `storedFindings` decodes all 100,000).
    static func findingStorageAtScale(_ config: Config) throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        var result = RuleRunResult()
        result.findings = ReportsBenchmark.syntheticFindings(100_000)
        let engine = RuleEngine(store: store, referenceCurrency: config.referenceCurrency)
        let (_, persist) = try Measure.time { try engine.persist(result, runID: 1) }
        let (rows, read) = try Measure.time { try store.rows("SELECT * FROM findings").count }
        let empty = ReportsBenchmark.ruleIDs.map { id in
            Rule(
                id: id, title: "Rule \(id)", description: "", version: "1.0", status: .stable, level: .high,
                query: "SELECT NULL AS transaction_id WHERE 1 = 0", entityKey: ["transaction_id"])
        }
        let (again, reread) = try Measure.time { try engine.evaluate(rules: empty, runID: 2, now: BenchWorld.now) }
        let (_, persistAgain) = try Measure.time { try engine.persist(again, runID: 2) }
        Measure.line(
            "rules", "100k synthetic findings: persist / read view",
            String(format: "persist %8.3f s  read %8.3f s (%d rows)", persist, read, rows))
        Measure.line(
            "rules", "100k synthetic findings: next run resolves all",
            String(
                format: "storedFindings+resolve %8.3f s (%d resolved)  persist %8.3f s", reread,
                again.findings.count, persistAgain))
    }

    /// IAP-001's core as the issue's best hand-written form, under the default pragmas and the two the
    /// issue says slow sorting GROUP BYs down.
    static func handWritten(_ store: SQLiteStore) throws {
        let sql = """
            SELECT transaction_id, COUNT(*) FROM credit
            WHERE transaction_id IN (
              SELECT transaction_id FROM credit WHERE transaction_id IS NOT NULL
              AND (reversed_at IS NULL OR reversed_at > ?) GROUP BY transaction_id HAVING COUNT(*) >= 2)
            AND (reversed_at IS NULL OR reversed_at > ?)
            GROUP BY transaction_id
            """
        let settings: [(String, String?)] = [
            ("default pragmas", nil), ("cache_size = -1048576 (1 GiB)", "PRAGMA cache_size = -1048576"),
            ("temp_store = MEMORY", "PRAGMA temp_store = MEMORY"),
        ]
        for (name, pragma) in settings {
            if let pragma { try store.database.execute(pragma) }
            let (rows, seconds) = try Measure.time {
                try store.database.query(sql, [.integer(BenchWorld.now), .integer(BenchWorld.now)]).count
            }
            Measure.line(
                "rules", "hand-written IAP-001 (IN (… GROUP BY … HAVING)), \(name)",
                String(format: "query %8.3f s  %6d rows", seconds, rows))
        }
        try store.database.execute("PRAGMA cache_size = -2000; PRAGMA temp_store = DEFAULT")
    }

    static func duckDB(_ options: BenchOptions, rules: [Rule], config: Config, ours: [String: Double]) throws {
        let rulesFile = options.directory.appendingPathComponent("rules-for-duckdb.json")
        try PythonSideBySide.writeRules(rules, config: config, to: rulesFile)
        let rows: [[String: Any]]
        do {
            rows = try PythonSideBySide.run(options, ["duckdb", IngestBenchmark.storePath(options), rulesFile.path])
        } catch {
            print("rules   DuckDB not measured: \(error)")
            return
        }
        var duckTotal = 0.0
        var oursSameRules = 0.0
        var failed: [String] = []
        for row in rows {
            if let exported = row["export_rows"] as? Int {
                Measure.line(
                    "rules", "DuckDB: export \(exported) view rows to Parquet (not timed against us)",
                    String(
                        format: "export %.1f s  load %.1f s", row["export_seconds"] as? Double ?? 0,
                        row["load_seconds"] as? Double ?? 0))
                continue
            }
            guard let id = row["rule"] as? String else { continue }
            if let error = row["error"] as? String {
                failed.append(id)
                Measure.line("rules", "DuckDB \(id)", "cannot run this SQL: \(error.prefix(100))")
                continue
            }
            let seconds = row["seconds"] as? Double ?? 0
            duckTotal += seconds
            let mine = ours[id] ?? 0
            oursSameRules += mine
            Measure.line(
                "rules", "DuckDB \(id), 2 threads",
                String(
                    format: "query %8.3f s  %6d rows  iapguard/DuckDB ×%.2f", seconds, row["rows"] as? Int ?? 0,
                    seconds > 0 ? mine / seconds : 0))
        }
        Measure.line(
            "rules", "rule phase on the rules DuckDB ran (\(rules.count - failed.count))",
            String(
                format: "iapguard %8.3f s  DuckDB %8.3f s  ratio ×%.2f", oursSameRules, duckTotal,
                duckTotal > 0 ? oursSameRules / duckTotal : 0))
        if !failed.isEmpty { print("rules   DuckDB could not run: \(failed.joined(separator: ", "))") }
    }
}
