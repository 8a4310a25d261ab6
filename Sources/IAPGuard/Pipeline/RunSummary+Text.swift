import Foundation

extension RunSummary {
    /// The summary as compact JSON with sorted keys (stored with the run).
    public func jsonText() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let data = try? encoder.encode(self) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// A human summary for stdout.
    public func text() -> String {
        var lines: [String] = []
        lines.append("iapguard run \(runID) — store \(storePath)" + (dryRun ? " (dry run: nothing was written)" : ""))
        if let window {
            lines.append(
                "window: " + (window.since.map(TimeParser.iso8601) ?? "the beginning") + " → "
                    + TimeParser.iso8601(window.until) + (reportID.map { " (report \($0))" } ?? ""))
        }
        if let resumedFrom {
            lines.append(
                "resumed run \(runID), which was interrupted (\(resumedFrom == "running" ? "killed" : resumedFrom)); "
                    + "its committed work was kept")
        }
        if !rewoundRunIDs.isEmpty {
            lines.append(
                "this window was evaluated before; replaced the findings of run(s) "
                    + rewoundRunIDs.map(String.init).joined(separator: ", "))
        }
        let header = ["source", "kind", "records", "inserted", "updated", "unchanged", "errors", "skipped files"]
        var table = [header]
        for s in sources {
            let c = s.counts
            table.append([
                TerminalText.escaped(s.name), s.kind, "\(c.records)", "\(c.inserted)", "\(c.updated)", "\(c.unchanged)",
                "\(c.errors)",
                "\(c.filesSkipped)",
            ])
        }
        let widths = (0..<header.count).map { column in table.map { $0[column].count }.max() ?? 0 }
        for row in table {
            lines.append(
                row.enumerated().map { index, cell in
                    index < 2
                        ? cell.padding(toLength: widths[index], withPad: " ", startingAt: 0)
                        : String(repeating: " ", count: widths[index] - cell.count) + cell
                }.joined(separator: "  "))
        }
        for pull in appStoreAPI { lines.append("app store api " + pull.text) }
        let order = ["transactions", "sightings", "orders", "credits", "notifications", "refunds"]
        lines.append("store: " + order.map { "\(storeCounts[$0] ?? 0) \($0)" }.joined(separator: ", "))
        lines.append(
            "transactions by verification: "
                + verification.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        if !failedSightings.isEmpty {
            lines.append(
                "failed verification (quarantined sightings): "
                    + failedSightings.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            )
        }
        if !failedNotifications.isEmpty {
            lines.append(
                "failed verification (notifications read in this run): "
                    + failedNotifications.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(
                        separator: ", "))
        }
        lines.append("quarantined records: \(quarantined)")
        if !ruleStats.isEmpty {
            lines.append("rules: hits (new/recurring), inconclusive, suppressed, resolved")
            for stats in ruleStats {
                lines.append(
                    "  \(stats.ruleID.padding(toLength: 8, withPad: " ", startingAt: 0)) \(stats.hits) (\(stats.new)/\(stats.recurring)), "
                        + "\(stats.inconclusive), \(stats.suppressed), \(stats.resolved)"
                        + (stats.mode.map { "  [\($0)]" } ?? "") + (stats.error.map { "  error: \($0)" } ?? ""))
            }
        }
        if !caseCounts.isEmpty {
            lines.append(
                "cases: "
                    + caseCounts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
        }
        if let reportFolder { lines.append("report: \(reportFolder)/report.html") }
        for error in ruleErrors { lines.append("rule error: \(error)") }
        for error in errors { lines.append("error: \(error)") }
        for warning in warnings { lines.append("warning: \(warning)") }
        if stopped { lines.append("stopped early on a signal; the next run continues from what was committed") }
        // Source names, paths, CSV header names and messages quote inputs and the config: no raw ESC or CR
        // reaches the terminal.
        return lines.map(TerminalText.escaped).joined(separator: "\n")
    }

    /// The final one-line summary for stderr: status, duration, records, hits and where the report is.
    public func oneLine(exitCode: Int32) -> String {
        let records = sources.reduce(0) { $0 + $1.counts.records }
        let inserted = sources.reduce(0) { $0 + $1.counts.inserted }
        let seconds = finishedAt > startedAt ? Double(finishedAt - startedAt) / 1000 : 0
        var levels: [String: Int] = [:]
        for byLevel in activeHits.values { for (level, count) in byLevel { levels[level, default: 0] += count } }
        let levelText = Finding.Level.allCases.reversed().compactMap { level in
            levels[level.rawValue].map { "\($0) \(level.rawValue)" }
        }.joined(separator: ", ")
        var text =
            "iapguard: run \(runID) \(status)\(dryRun ? " (dry run)" : "") in " + String(format: "%.1f", seconds) + "s"
        text += " · \(records) records read (\(inserted) new), \(quarantined) quarantined"
        text += " · \(activeHitCount) active hits" + (levelText.isEmpty ? "" : " (\(levelText))")
        if !errors.isEmpty { text += " · \(errors.count) source error(s)" }
        if !warnings.isEmpty { text += " · \(warnings.count) warning(s)" }
        if !ruleErrors.isEmpty { text += " · \(ruleErrors.count) rule error(s)" }
        if let reportFolder { text += " · report \(reportFolder)" }
        return TerminalText.escaped(text + " · exit \(exitCode)")
    }
}
