import Foundation
import Logging
import Testing

@testable import IAPGuard
@testable import IAPGuardSampleWorld

/// The case queue on a generated world, held against its `truth.jsonl`: every injected incident is exactly
/// one case, the open cases are about as many as the incidents, a triage state survives later runs (an
/// incremental one, a `--full-rebuild`, one more), case ids are the same in a store built by one full run,
/// and `cases.csv` reads back with Python's csv module.
@Suite(.serialized) struct CaseQueueTests {
    static let end = WorldGenerator.defaultEnd
    static let quiet = Logger(label: "iapguard.test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// One injected incident: consecutive `hit` lines of one pattern (the generator writes a scenario's lines
    /// together, and neighbouring scenarios have different patterns).
    struct Incident: Sendable {
        var pattern: String
        var lines: [[String: String]]
    }

    struct World: Sendable {
        var directory: URL
        var config: Config
        var incidents: [Incident]
        var firstRun: RunSummary

        static let shared: Result<World, any Error> = Result { try make() }

        static func make() throws -> World {
            var root = URL(fileURLWithPath: #filePath)
            for _ in 0..<4 { root.deleteLastPathComponent() }
            let directory = TestScratch.root
                .appendingPathComponent("iapguard-cases-\(ProcessInfo.processInfo.processIdentifier)")
            try? FileManager.default.removeItem(at: directory)
            _ = try WorldGenerator(
                options: .init(
                    seed: 3, users: 600, days: 30, end: end, rulesPath: root.appendingPathComponent("rules").path)
            ).write(to: directory)
            let config = try Config.load(from: directory.appendingPathComponent("iapguard.yml"))
            let first = try pipeline(config).run(Pipeline.Options(until: end, failOn: nil))
            return World(
                directory: directory, config: config,
                incidents: try CaseQueueTests.incidents(directory.appendingPathComponent("truth.jsonl")),
                firstRun: first)
        }
    }

    static func pipeline(_ config: Config) throws -> Pipeline {
        Pipeline(config: config, verifier: try JWSVerifier.make(for: config), logger: quiet)
    }

    static func incidents(_ truth: URL) throws -> [Incident] {
        var out: [Incident] = []
        var previous: String?
        for line in try String(contentsOf: truth, encoding: .utf8).split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                .compactMapValues { $0 as? String }
            let pattern = object["pattern"] ?? ""
            defer { previous = pattern }
            guard object["expect"] == "hit" else { continue }
            if pattern == previous, let last = out.indices.last, out[last].pattern == pattern {
                out[last].lines.append(object)
            } else {
                out.append(Incident(pattern: pattern, lines: [object]))
            }
        }
        return out
    }

    /// An active finding and its case.
    struct Member {
        var row: DemoWorldTruthTests.Row
        var findingID: String
        var caseID: String
        var status: String
    }

    static func members(_ storePath: String) throws -> [Member] {
        let store = try SQLiteStore(path: storePath, readOnly: true)
        return try store.database.query(
            """
            SELECT f.rule_id, f.level, f.transaction_id, f.original_transaction_id, f.order_id, f.user_id,
                   f.finding_id, c.case_id, c.status
            FROM findings f JOIN case_findings m ON m.finding_id = f.finding_id JOIN cases c ON c.case_id = m.case_id
            WHERE f.outcome = 'hit' AND f.status IN ('new', 'recurring') AND m.active = 1
            ORDER BY f.finding_id
            """
        ).map { v in
            Member(
                row: DemoWorldTruthTests.Row(
                    ruleID: v[0].textValue ?? "", level: v[1].textValue ?? "", transactionID: v[2].textValue,
                    originalTransactionID: v[3].textValue, orderID: v[4].textValue, userID: v[5].textValue),
                findingID: v[6].textValue ?? "", caseID: v[7].textValue ?? "", status: v[8].textValue ?? "")
        }
    }

    /// The cases holding findings of each incident.
    static func casesByIncident(_ world: World, _ members: [Member]) -> [Set<String>] {
        world.incidents.map { incident in
            Set(
                members.filter { m in incident.lines.contains { DemoWorldTruthTests.matches($0, m.row) } }.map(\.caseID)
            )
        }
    }

    @Test func everyInjectedIncidentIsExactlyOneCaseAndOpenCasesAreAboutAsManyAsIncidents() throws {
        let world = try World.shared.get()
        #expect(world.incidents.count > 50)
        let members = try Self.members(world.config.storePath.path)
        let byIncident = Self.casesByIncident(world, members)
        var owner: [String: Int] = [:]
        var actionable = 0
        for (index, cases) in byIncident.enumerated() {
            let incident = world.incidents[index]
            let what = "\(incident.pattern) \(incident.lines.first?["note"] ?? "")"
            // An incident the truth expects only at informational level (a forgery the backend refused) is
            // context, not work: it opens no case of its own.
            guard incident.lines.contains(where: { $0["level"] != "informational" }) else { continue }
            actionable += 1
            #expect(cases.count == 1, "incident \(what) is in \(cases.count) cases: \(cases.sorted())")
            for caseID in cases {
                if let other = owner[caseID], other != index {
                    Issue.record("case \(caseID) holds two incidents: \(world.incidents[other].pattern) and \(what)")
                }
                owner[caseID] = index
            }
        }
        let open = Set(members.filter { $0.status == "open" }.map(\.caseID)).count
        let injected = actionable
        #expect(
            abs(open - injected) * 10 <= injected,
            "open cases \(open) vs injected incidents \(injected): more than 10 % apart")
        #expect(world.firstRun.caseCounts["opened"] == Set(members.map(\.caseID)).count)
    }

    @Test func aTriageStateSurvivesLaterIncrementalAndFullRebuildRunsAndIdsMatchAFullRun() throws {
        let world = try World.shared.get()
        // A copy of the world and its store, so the shared one stays as the first run left it.
        let copy = TestScratch.root.appendingPathComponent("iapguard-cases-triage-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: world.directory, to: copy)
        defer { try? FileManager.default.removeItem(at: copy) }
        let config = try Config.load(from: copy.appendingPathComponent("iapguard.yml"))
        let before = try Self.members(config.storePath.path)
        let incident = try #require(world.incidents.first { $0.pattern == "credit-to-other-user" })
        let caseID = try #require(
            before.first { m in incident.lines.contains { DemoWorldTruthTests.matches($0, m.row) } }?.caseID)
        let store = try SQLiteStore(path: config.storePath.path)
        try CaseTriage(connection: store.connection).setStatus(
            caseID, to: .falsePositive, by: "analyst-1", note: "support confirmed the account merge", at: 1)

        let pipeline = try Self.pipeline(config)
        let runs = [
            Pipeline.Options(until: Self.end + 60_000, failOn: nil),
            Pipeline.Options(until: Self.end + 120_000, failOn: nil, fullRebuild: true),
            Pipeline.Options(until: Self.end + 180_000, failOn: nil),
        ]
        for options in runs {
            let summary = try pipeline.run(options)
            #expect(summary.ruleErrors.isEmpty)
            let triaged = try CaseReader(connection: store.connection).find(caseID)
            #expect(triaged.status == .falsePositive, "after run \(summary.runID): \(triaged.status)")
            #expect(triaged.statusBy == "analyst-1")
        }
        let after = try Self.members(config.storePath.path)
        #expect(
            Dictionary(uniqueKeysWithValues: after.map { ($0.findingID, $0.caseID) })
                == Dictionary(uniqueKeysWithValues: before.map { ($0.findingID, $0.caseID) }))
        let history = try CaseReader(connection: store.connection).history(of: caseID)
        #expect(history.map(\.to) == [.open, .falsePositive])

        // --fail-on counts hits by default; with open cases, closing every case lets the job pass.
        let triage = CaseTriage(connection: store.connection)
        for open in try CaseReader(connection: store.connection).list(CaseReader.Filter(status: .open)) {
            try triage.setStatus(open.caseID, to: .falsePositive, by: "analyst-1", note: nil, at: 2)
        }
        var byHits = Pipeline.Options(until: Self.end + 240_000, failOn: .informational)
        #expect(try pipeline.run(byHits).findingsAtOrAboveFailOn)
        byHits.failOnOpenCases = true
        #expect(try pipeline.run(byHits).findingsAtOrAboveFailOn == false)
        try triage.setStatus(caseID, to: .open, by: "analyst-1", note: "second look", at: 3)
        #expect(try pipeline.run(byHits).findingsAtOrAboveFailOn)

        // A store built by one full run over the same data gives every incident the same case id.
        let fresh = TestScratch.root.appendingPathComponent("iapguard-cases-fresh-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: world.directory, to: fresh)
        defer { try? FileManager.default.removeItem(at: fresh) }
        try? FileManager.default.removeItem(at: fresh.appendingPathComponent("state"))
        try? FileManager.default.removeItem(at: fresh.appendingPathComponent("reports"))
        let freshConfig = try Config.load(from: fresh.appendingPathComponent("iapguard.yml"))
        _ = try Self.pipeline(freshConfig).run(
            Pipeline.Options(until: Self.end + 180_000, failOn: nil, fullRebuild: true))
        let full = try Self.members(freshConfig.storePath.path)
        #expect(full.count == after.count)
        #expect(
            Dictionary(uniqueKeysWithValues: full.map { ($0.findingID, $0.caseID) })
                == Dictionary(uniqueKeysWithValues: after.map { ($0.findingID, $0.caseID) }))
    }

    @Test func aCaseShowsItsFindingsEvidenceHistoryAndTimelineAsTextJSONAndSafeHTML() throws {
        let world = try World.shared.get()
        let store = try SQLiteStore(path: world.config.storePath.path, readOnly: true)
        let first = try #require(try CaseReader(connection: store.connection).list().first { !$0.rules.isEmpty })
        let detail = try CaseDetail.load(caseID: first.caseID, store: store, referenceCurrency: "USD")
        #expect(detail.incident.caseID == first.caseID)
        #expect(detail.findings.map(\.findingID).sorted() == first.findingIDs)
        #expect(detail.findings.allSatisfy { !$0.evidence.isEmpty })
        #expect(!detail.timeline.isEmpty)
        #expect(detail.history.first?.to == .open)
        let text = detail.text()
        #expect(text.contains("HISTORY") && text.contains("TIMELINE") && text.contains(first.caseID))
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(detail.json().utf8)) as? [String: Any])
        #expect((json["case"] as? [String: Any])?["finding_ids"] as? [String] == first.findingIDs)
        let page = TestScratch.root.appendingPathComponent("case-\(UUID().uuidString).html")
        defer { try? FileManager.default.removeItem(at: page) }
        try Data(detail.html().utf8).write(to: page)
        let verdict = try ReportTestSupport.htmlVerdict(page)
        #expect(verdict.errors.isEmpty, "\(verdict.errors.prefix(5))")
        #expect(verdict.scripts == 1)
    }

    @Test func casesCSVReadsBackWithPythonAndTheReportOpensOnTheQueue() throws {
        let world = try World.shared.get()
        let folder = URL(fileURLWithPath: try #require(world.firstRun.reportFolder))
        let rows = try ReportTestSupport.pythonCSVRows(folder.appendingPathComponent("cases.csv"))
        #expect(rows.first == ReportCSV.caseColumns)
        let members = try Self.members(world.config.storePath.path)
        #expect(rows.count - 1 == Set(members.map(\.caseID)).count)
        #expect(rows.dropFirst().map { $0[1] } == (1..<rows.count).map(String.init))
        for row in rows.dropFirst() { #expect(row.count == ReportCSV.caseColumns.count) }
        let html = try String(contentsOf: folder.appendingPathComponent("report.html"), encoding: .utf8)
        let queue = try #require(html.range(of: "<section id=\"cases\""))
        let summary = try #require(html.range(of: "<section id=\"summary\""))
        let firstRule = try #require(html.range(of: "<section class=\"rule\""))
        #expect(queue.lowerBound < summary.lowerBound && summary.lowerBound < firstRule.lowerBound)
        let verdict = try ReportTestSupport.htmlVerdict(folder.appendingPathComponent("report.html"))
        #expect(verdict.errors.isEmpty, "\(verdict.errors.prefix(5))")
    }
}
