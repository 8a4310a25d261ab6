import Foundation
import IAPGuard

/// The whole-pipeline peer (`Benchmarks/Scripts/peer_pipeline.py`: orjson decode, `cryptography` ES256 and
/// chain checks, DuckDB load and the same rule SQL, on 2 worker processes) run on the world right after
/// iapguard's whole run, and the figures of both side by side: seconds, peak RSS, verification outcomes and
/// rows per rule (iapguard's rows are its rule queries re-run on the run's store, not timed).
enum PeerPipeline {
    /// What iapguard's whole run measured, for the ratios.
    struct Ours {
        var seconds: Double
        var peakRSS: Int
        var storePath: String
        /// The rule stage, the cases and the report (the part the peer's `rules` compares with).
        var rulesAndReportSeconds: Double
    }

    /// Where `run` keeps the peer's whole-run seconds for `incremental` to compare the daily run with.
    static func peerSecondsFile(_ options: BenchOptions) -> URL {
        options.directory.appendingPathComponent("peer-whole-run-seconds.txt")
    }

    /// Fails with the install command when the peer's Python modules are missing (checked before iapguard's
    /// run, so a missing module does not cost a whole run).
    static func checkPrerequisites(_ options: BenchOptions) throws {
        try PythonSideBySide.requireModules(
            options, ["duckdb", "orjson", "cryptography", "yaml"], for: "the whole-pipeline peer (peer_pipeline.py)")
    }

    static func run(_ options: BenchOptions, config: Config, rules: [Rule], ours: Ours) throws {
        let rulesFile = options.directory.appendingPathComponent("rules-for-peer.json")
        try PythonSideBySide.writeRules(rules, config: config, to: rulesFile)
        Measure.header("run", "whole-pipeline peer: DuckDB + orjson + cryptography, 2 processes, same world")
        let (rows, wall) = try Measure.time {
            try PythonSideBySide.run(
                options, [config.file.path, rulesFile.path, "--workers", "2"], script: "peer_pipeline.py")
        }
        guard let result = rows.last else { throw BenchError("peer_pipeline.py printed no result") }
        let seconds = result["seconds"] as? [String: Double] ?? [:]
        for stage in ["decode", "verify", "decode_verify_wall", "load", "rules", "total"] {
            Measure.line("run", "  peer \(stage)", String(format: "%8.2f s", seconds[stage] ?? 0))
        }
        let records = result["records"] as? [String: [String: Int]] ?? [:]
        if let decoded = records["decoded"] {
            let text = decoded.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            Measure.line("run", "  peer records decoded", text)
        }
        // The peer's tables beside the store's views (rows per view; `refunds` differs where the store keeps a
        // revocation that a later REFUND_REVERSED cleared, see Benchmarks/README.md).
        let store = try SQLiteStore(path: ours.storePath)
        let views = ["credits", "notifications", "orders", "refunds", "sightings", "transactions"]
        for table in views {
            guard let peerRows = records["loaded"]?[table] else { continue }
            let storeRows = try store.database.scalar("SELECT COUNT(*) FROM \(table)")?.integerValue ?? -1
            Measure.line(
                "run", "  rows in \(table): iapguard store / peer",
                "\(storeRows) / \(peerRows)\(storeRows == peerRows ? "" : "  (differ)")")
        }
        let peerSeconds = seconds["total"] ?? wall
        let rss = result["peak_rss_kib"] as? [String: Int] ?? [:]
        let workers = result["workers"] as? Int ?? 2
        // The main process and each worker at its peak at once: an upper bound of the peer's resident memory.
        let peerRSS = ((rss["main"] ?? 0) + workers * (rss["largest_worker"] ?? 0)) * 1024
        Measure.line(
            "run", "whole run: iapguard / peer (\(workers) processes)",
            String(
                format: "iapguard %8.1f s  peer %8.1f s (wall from here %.1f s)  ratio ×%.2f (target ≤ 0.8)",
                ours.seconds, peerSeconds, wall, ours.seconds / max(peerSeconds, 1e-9)))
        try? String(format: "%.3f\n", peerSeconds).write(
            to: peerSecondsFile(options), atomically: true, encoding: .utf8)
        let peerRules = seconds["rules"] ?? 0
        Measure.line(
            "run", "rules + cases + report: iapguard / peer's rules",
            String(
                format: "iapguard %8.1f s  peer %8.1f s  ratio ×%.2f (target ≤ 1.5)", ours.rulesAndReportSeconds,
                peerRules, ours.rulesAndReportSeconds / max(peerRules, 1e-9)))
        Measure.line(
            "run", "peak RSS: iapguard / peer",
            "iapguard \(Measure.mib(ours.peakRSS))  peer \(Measure.mib(peerRSS)) (main "
                + "\(Measure.mib((rss["main"] ?? 0) * 1024)) + \(workers) × largest worker "
                + "\(Measure.mib((rss["largest_worker"] ?? 0) * 1024)))  ratio "
                + Measure.ratio(Double(ours.peakRSS), Double(peerRSS)))
        try compareVerification(result, storePath: ours.storePath)
        compareRules(result, rules: rules, config: config, storePath: ours.storePath, options: options)
    }

    /// Verification outcomes of the peer beside the run's store: signed-transaction sightings, the nested
    /// transactions of notifications, and the notifications themselves.
    static func compareVerification(_ result: [String: Any], storePath: String) throws {
        let peer = result["verification"] as? [String: Int] ?? [:]
        func peerCount(_ label: String, _ status: String) -> Int {
            peer.filter { $0.key == "\(label) \(status)" || $0.key.hasPrefix("\(label) \(status) ") }.values.reduce(
                0, +)
        }
        let store = try SQLiteStore(path: storePath)
        func storeCount(_ sql: String, _ status: String) throws -> Int {
            Int(try store.database.scalar(sql, [.text(status)])?.integerValue ?? 0)
        }
        let sightings = "SELECT COUNT(*) FROM sightings WHERE source_kind = ? AND verification = ?"
        let kinds: [(String, String, String)] = [
            ("signed transactions", "transaction", "jws"),
            ("notifications' nested transactions", "notification-transaction", "notification"),
        ]
        for (name, label, kind) in kinds {
            var line: [String] = []
            for status in ["verified", "failed"] {
                let ours = Int(
                    try store.database.scalar(sightings, [.text(kind), .text(status)])?.integerValue ?? 0)
                line.append("\(status) iapguard \(ours) peer \(peerCount(label, status))")
            }
            Measure.line("run", "  verification, \(name)", line.joined(separator: "; "))
        }
        var line: [String] = []
        for status in ["verified", "failed"] {
            let ours = try storeCount("SELECT COUNT(*) FROM notifications WHERE verification = ?", status)
            line.append("\(status) iapguard \(ours) peer \(peerCount("notification", status))")
        }
        Measure.line("run", "  verification, notifications", line.joined(separator: "; "))
        let ourFailures = try store.database.query(
            "SELECT source_kind, verification_reason, COUNT(*) FROM sightings WHERE verification = 'failed' "
                + "GROUP BY source_kind, verification_reason ORDER BY source_kind, verification_reason"
        ).map { "\($0[0].textValue ?? "?") \($0[1].textValue ?? "?"): \($0[2].integerValue ?? 0)" }
        Measure.line(
            "run", "  iapguard failed sightings", ourFailures.isEmpty ? "none" : ourFailures.joined(separator: ", "))
        let failures = peer.filter { $0.value > 0 && $0.key.contains(" failed") }
            .sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }
        Measure.line(
            "run", "  peer verification failures", failures.isEmpty ? "none" : failures.joined(separator: ", "))
        if let errors = result["decode_errors"] as? Int, errors > 0 {
            let examples = (result["decode_error_examples"] as? [String] ?? []).joined(separator: " | ")
            Measure.line("run", "  peer decode errors (quarantined)", "\(errors): \(examples.prefix(200))")
        }
    }

    /// Rows per rule: the peer's DuckDB result beside the same rule SQL on iapguard's store (SQLite).
    static func compareRules(
        _ result: [String: Any], rules: [Rule], config: Config, storePath: String, options: BenchOptions
    ) {
        var differ: [String] = []
        for row in result["rules"] as? [[String: Any]] ?? [] {
            guard let id = row["id"] as? String, let rule = rules.first(where: { $0.id == id }) else { continue }
            let bound = rule.boundParameters(
                overrides: config.ruleParams[id] ?? [:], now: BenchWorld.now, since: 0,
                referenceCurrency: config.referenceCurrency)
            let ours = RawQuery.run(path: storePath, sql: rule.query, parameters: bound, limit: options.ruleTimeLimit)
            let oursText = ours.error.map { "error \($0.prefix(40))" } ?? (ours.timedOut ? "timed out" : "\(ours.rows)")
            let peerText: String
            if let error = row["error"] as? String {
                peerText = "error \(error.prefix(80))"
                // A rule the peer could not run is a difference, not an agreement.
                differ.append(id + " (peer error)")
            } else {
                let rows = row["rows"] as? Int ?? -1
                peerText = String(format: "%d rows %.3f s", rows, row["seconds"] as? Double ?? 0)
                if ours.error == nil && !ours.timedOut && rows != ours.rows { differ.append(id) }
            }
            Measure.line("run", "  \(id) rows: iapguard store / peer", "\(oursText) / \(peerText)")
        }
        Measure.line(
            "run", "  rules whose row counts differ", differ.isEmpty ? "none" : differ.joined(separator: ", "))
    }
}
