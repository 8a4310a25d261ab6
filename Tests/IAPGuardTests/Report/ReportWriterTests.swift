import Foundation
import Testing

@testable import IAPGuard

@Suite struct ReportWriterTests {
    static func contents(_ folder: URL) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for name in ReportTestSupport.listing(folder) {
            var isDirectory: ObjCBool = false
            let url = folder.appendingPathComponent(name)
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue {
                out[name] = try Data(contentsOf: url)
            }
        }
        return out
    }

    @Test func rerunningTheSameInputWritesIdenticalBytes() throws {
        let a = try ReportTestSupport.temporaryDirectory()
        let b = try ReportTestSupport.temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: a)
            try? FileManager.default.removeItem(at: b)
        }
        let writerA = ReportWriter(reportsDirectory: a)
        try writerA.write(ReportFixtures.standard())
        let first = try Self.contents(a)
        try writerA.write(ReportFixtures.standard())
        #expect(try Self.contents(a) == first)
        // A different folder (different temp names) gives the same bytes too; input order does not matter.
        var shuffled = ReportFixtures.standard()
        shuffled.findings.reverse()
        shuffled.history.reverse()
        try ReportWriter(reportsDirectory: b).write(shuffled)
        #expect(try Self.contents(b) == first)
        #expect(
            first.keys.sorted() == [
                "42/cases.csv", "42/evidence.csv", "42/findings.csv", "42/report.html", "42/summary.json",
                "history.jsonl", "index.html",
            ])
    }

    @Test func existingRunFolderIsReplacedWholeWithNoLeftovers() throws {
        let reports = try ReportTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: reports) }
        let writer = ReportWriter(reportsDirectory: reports)
        let folder = writer.runDirectory(42)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("stale".utf8).write(to: folder.appendingPathComponent("stale.txt"))
        try Data("old".utf8).write(to: folder.appendingPathComponent("report.html"))
        let written = try writer.write(ReportFixtures.standard())
        #expect(written.standardizedFileURL.path == folder.standardizedFileURL.path)
        #expect(
            ReportTestSupport.listing(folder) == [
                "cases.csv", "evidence.csv", "findings.csv", "report.html", "summary.json",
            ])
        let html = try String(contentsOf: folder.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        #expect(!ReportTestSupport.listing(reports).contains { $0.hasPrefix(".tmp-") || $0.hasPrefix(".old-") })
    }

    @Test func historyKeepsOneLinePerRunIDAndFeedsTheTrend() throws {
        let reports = try ReportTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: reports) }
        let writer = ReportWriter(reportsDirectory: reports)
        var input = ReportFixtures.standard()
        input.history = []
        try writer.write(input)
        try writer.write(input)
        var next = input
        next.runID = 43
        next.finishedAt += 86_400_000
        next.findings = Array(input.findings.prefix(2)).map {
            var f = $0
            f.runID = 43
            return f
        }
        try writer.write(next)
        // Re-run 42 with fewer findings: its line is replaced, not added.
        var rerun = input
        rerun.findings = []
        try writer.write(rerun)
        let history = try writer.readHistory()
        #expect(history.map(\.runID) == [42, 43])
        #expect(history[0].total == 0)
        let lines = try String(contentsOf: reports.appendingPathComponent("history.jsonl"), encoding: .utf8)
            .split(separator: "\n")
        #expect(lines.count == 2)
        // Run 43's report counted run 42 (from the file) as the previous run.
        let summary = try String(contentsOf: reports.appendingPathComponent("43/summary.json"), encoding: .utf8)
        #expect(summary.contains("\"previous_run_id\" : 42") || summary.contains("\"previous_run_id\":42"))
        let index = try String(contentsOf: reports.appendingPathComponent("index.html"), encoding: .utf8)
        #expect(index.contains("href=\"42/report.html\"") && index.contains("href=\"43/report.html\""))
    }

    @Test func pseudonymisedReportsContainNoRawUserIDs() throws {
        let reports = try ReportTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: reports) }
        let key = Data("test-key-not-secret".utf8)
        let folder = try ReportWriter(reportsDirectory: reports, options: ReportOptions(pseudonymizeUserIDs: key))
            .write(ReportFixtures.standard())
        let p = UserIDPseudonymizer(key: key)
        for name in ReportWriter.runFiles {
            let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
            for id in ["u-1042", "u-7", "u-9", "u-3"] {
                #expect(
                    !text.contains(id + "\"") && !text.contains(id + "<") && !text.contains(id + "."),
                    "\(id) in \(name)")
            }
            if name != "summary.json" { #expect(text.contains(p.pseudonym("u-1042")), "\(name)") }
        }
        #expect(p.pseudonym("u-1042").hasPrefix("anon-") && p.pseudonym("u-1042").count == 21)
        #expect(p.pseudonym("u-1042") == UserIDPseudonymizer(key: key).pseudonym("u-1042"))
        #expect(p.pseudonym("u-1042") != UserIDPseudonymizer(key: Data("other".utf8)).pseudonym("u-1042"))
        // Whole-word replacement only: u-10 must not match inside u-1042.
        #expect(p.scrub("u-1042 and u-10", knownUserIDs: ["u-10"]) == "u-1042 and " + p.pseudonym("u-10"))
    }

    @Test func summaryJSONIsSchemaVersionedWithCountsAndChange() throws {
        let reports = try ReportTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: reports) }
        let folder = try ReportWriter(reportsDirectory: reports).write(ReportFixtures.standard())
        let data = try Data(contentsOf: folder.appendingPathComponent("summary.json"))
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["schema_version"] as? Int == 2)
        let totals = try #require(object["totals"] as? [String: Any])
        #expect(totals["active"] as? Int == 3)
        #expect(totals["new"] as? Int == 2)
        #expect(totals["recurring"] as? Int == 1)
        #expect(totals["inconclusive"] as? Int == 1)
        #expect(totals["suppressed"] as? Int == 1)
        #expect(totals["resolved"] as? Int == 1)
        // 1.98 + 1.45 + 0.69 (each transaction once).
        #expect(totals["money_at_risk"] as? String == "4.12")
        let change = try #require(object["change_since_previous"] as? [String: Any])
        #expect(change["previous_run_id"] as? Int == 41)
        let byLevel = try #require(change["by_level"] as? [String: Int])
        #expect(byLevel["high"] == 1 && byLevel["critical"] == 0 && byLevel["medium"] == -1)
    }

    @Test func htmlShowsAtMostTheRowCapPerRuleAndPointsToTheCSVForTheRest() throws {
        let reports = try ReportTestSupport.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: reports) }
        let folder = try ReportWriter(reportsDirectory: reports, options: ReportOptions(maxHTMLRowsPerRule: 3))
            .write(ReportFixtures.hostile())
        let html = try String(contentsOf: folder.appendingPathComponent("report.html"), encoding: .utf8)
        // 16 active hits: 3 shown, 13 left to the CSV; inconclusive and suppressed buckets have 1 each.
        #expect(html.contains("13 more not shown here"))
        #expect(html.components(separatedBy: "<details id=\"hit-").count - 1 == 3 + 1 + 1)
        let rows = try ReportTestSupport.pythonCSVRows(folder.appendingPathComponent("findings.csv"))
        #expect(rows.count - 1 == ReportFixtures.hostile().findings.count)
    }
}
