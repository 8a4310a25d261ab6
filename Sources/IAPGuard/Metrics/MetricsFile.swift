import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The run's metrics in the Prometheus text exposition format, for node_exporter's textfile collector
/// (`--collector.textfile.directory`). Written atomically (temporary file + rename) so the collector never
/// reads half a file. Metric names and labels are listed in `docs/operations.md`.
public struct MetricsFile: Sendable {
    public let path: URL

    public init(path: URL) {
        self.path = path
    }

    /// The text of the file. `summary` is nil when the run failed before it could start (bad config);
    /// `lastSuccess` is the epoch-ms time of the latest run that completed (exit 0 or 2), if any.
    public static func render(summary: RunSummary?, exitCode: Int32, now: Int64, lastSuccess: Int64?) -> String {
        var out = MetricsText()
        out.gauge("iapguard_run_exit_code", "Exit code of the latest run (0 ok, 2 findings; see docs/operations.md).")
        out.sample("iapguard_run_exit_code", [:], Double(exitCode))
        out.gauge("iapguard_run_timestamp_seconds", "When the latest run ended (Unix time).")
        out.sample("iapguard_run_timestamp_seconds", [:], Double(now) / 1000)
        out.gauge("iapguard_last_success_timestamp_seconds", "When the latest completed run (exit 0 or 2) ended.")
        if let lastSuccess { out.sample("iapguard_last_success_timestamp_seconds", [:], Double(lastSuccess) / 1000) }
        guard let summary else { return out.text }

        out.gauge("iapguard_run_duration_seconds", "Wall time of the latest run.")
        let duration = summary.finishedAt > summary.startedAt ? summary.finishedAt - summary.startedAt : 0
        out.sample("iapguard_run_duration_seconds", [:], Double(duration) / 1000)
        out.gauge("iapguard_run_stopped", "1 if the latest run stopped early on SIGTERM/SIGINT.")
        out.sample("iapguard_run_stopped", [:], summary.stopped ? 1 : 0)
        out.gauge("iapguard_run_dry_run", "1 if the latest run was a dry run.")
        out.sample("iapguard_run_dry_run", [:], summary.dryRun ? 1 : 0)
        if let window = summary.window {
            out.gauge("iapguard_window_until_timestamp_seconds", "End of the latest run's window.")
            out.sample("iapguard_window_until_timestamp_seconds", [:], Double(window.until) / 1000)
        }
        out.gauge("iapguard_stage_duration_seconds", "Wall time per stage of the latest run.")
        for (stage, seconds) in summary.stageSeconds.sorted(by: { $0.key < $1.key }) {
            out.sample("iapguard_stage_duration_seconds", ["stage": stage], seconds)
        }
        let perSource: [(String, String, (WriteCounts) -> Int)] = [
            ("iapguard_source_records", "Records read per source in the latest run.", { $0.records }),
            ("iapguard_source_inserted", "Records new to the store per source.", { $0.inserted }),
            ("iapguard_source_updated", "Records that changed a stored row per source.", { $0.updated }),
            ("iapguard_source_unchanged", "Records already stored unchanged per source.", { $0.unchanged }),
            ("iapguard_source_quarantined", "Records quarantined per source.", { $0.errors }),
            ("iapguard_source_files_skipped", "Unchanged files skipped per source.", { $0.filesSkipped }),
        ]
        for (name, help, value) in perSource {
            out.gauge(name, help)
            for source in summary.sources {
                out.sample(name, ["source": source.name, "kind": source.kind], Double(value(source.counts)))
            }
        }
        out.gauge("iapguard_source_up", "1 if the source could be read in the latest run, 0 if it failed.")
        for source in summary.sources {
            out.sample("iapguard_source_up", ["source": source.name, "kind": source.kind], source.error == nil ? 1 : 0)
        }
        let api: [(String, String, (ApplePullSummary) -> Int)] = [
            ("iapguard_api_calls", "App Store Server API calls per source in the latest run.", { $0.calls }),
            (
                "iapguard_api_http_attempts",
                "HTTP requests sent to the App Store Server API per source (every retry included).", { $0.attempts }
            ),
            ("iapguard_api_failed_calls", "API calls that failed after their retries per source.", { $0.errors.count }),
        ]
        for (name, help, value) in api where !summary.appStoreAPI.isEmpty {
            out.gauge(name, help)
            for pull in summary.appStoreAPI { out.sample(name, ["source": pull.source], Double(value(pull))) }
        }
        out.gauge("iapguard_store_rows", "Rows per store view after the latest run.")
        for (view, count) in summary.storeCounts.sorted(by: { $0.key < $1.key }) {
            out.sample("iapguard_store_rows", ["view": view], Double(count))
        }
        out.gauge("iapguard_quarantined_records", "Records in quarantine after the latest run.")
        out.sample("iapguard_quarantined_records", [:], Double(summary.quarantined))
        out.gauge("iapguard_findings_active", "Active hits (new or recurring, not suppressed) per rule and level.")
        for (rule, levels) in summary.activeHits.sorted(by: { $0.key < $1.key }) {
            for (level, count) in levels.sorted(by: { $0.key < $1.key }) {
                out.sample("iapguard_findings_active", ["rule": rule, "level": level], Double(count))
            }
        }
        let perRule: [(String, String, (RuleRunResult.RuleStats) -> Double)] = [
            ("iapguard_rule_hits", "Unsuppressed hits per rule.", { Double($0.hits) }),
            ("iapguard_rule_new", "New findings per rule.", { Double($0.new) }),
            ("iapguard_rule_inconclusive", "Inconclusive findings per rule.", { Double($0.inconclusive) }),
            ("iapguard_rule_suppressed", "Suppressed findings per rule.", { Double($0.suppressed) }),
            ("iapguard_rule_resolved", "Findings resolved in the latest run per rule.", { Double($0.resolved) }),
            ("iapguard_rule_error", "1 if the rule's query failed.", { $0.error == nil ? 0 : 1 }),
            ("iapguard_rule_query_seconds", "Query time per rule.", { $0.queryMillis / 1000 }),
            (
                "iapguard_rule_incremental", "1 if the rule was evaluated incrementally.",
                { $0.mode == "incremental" ? 1 : 0 }
            ),
        ]
        for (name, help, value) in perRule {
            out.gauge(name, help)
            for stats in summary.ruleStats { out.sample(name, ["rule": stats.ruleID], value(stats)) }
        }
        out.gauge("iapguard_rule_file_errors", "Rule files rejected or rules that failed in the latest run.")
        out.sample("iapguard_rule_file_errors", [:], Double(summary.ruleErrors.count))
        return out.text
    }

    /// Reads `iapguard_last_success_timestamp_seconds` from an earlier file at `path` (epoch ms), if any.
    public func previousLastSuccess() -> Int64? {
        guard let text = try? String(contentsOf: path, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("iapguard_last_success_timestamp_seconds ") {
            if let value = Double(line.split(separator: " ").last ?? "") { return Money.rounded(value * 1000) }
        }
        return nil
    }

    /// Writes `text` to a temporary file in the same folder, then renames it over `path`.
    public func write(_ text: String) throws {
        let directory = path.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let temporary = directory.appendingPathComponent(".\(path.lastPathComponent).\(getpid()).tmp")
        try Data(text.utf8).write(to: temporary)
        guard rename(temporary.path, path.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw CocoaError(
                .fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "rename to \(path.path): \(reason)"])
        }
    }
}

/// Builds Prometheus text: `# HELP`/`# TYPE` once per metric, escaped label values, stable order.
struct MetricsText {
    private(set) var text = ""

    mutating func gauge(_ name: String, _ help: String) {
        text += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n"
    }

    mutating func sample(_ name: String, _ labels: [String: String], _ value: Double) {
        text += name
        if !labels.isEmpty {
            text +=
                "{"
                + labels.sorted { $0.key < $1.key }.map { "\($0.key)=\"\(Self.escape($0.value))\"" }
                .joined(separator: ",") + "}"
        }
        text += " " + Self.format(value) + "\n"
    }

    static func escape(_ value: String) -> String {
        var out = ""
        for character in value {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            default: out.append(character)
            }
        }
        return out
    }

    static func format(_ value: Double) -> String {
        if value.rounded() == value, abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"  // shortest round-trip form, e.g. 1004.5 or 1.7e+09 (valid Prometheus floats)
    }
}
