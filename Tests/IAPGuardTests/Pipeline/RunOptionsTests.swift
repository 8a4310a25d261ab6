import Foundation
import Testing

@testable import IAPGuard

/// `--dry-run`, `--full-rebuild`, the default window, `--metrics-file` and `--healthcheck-url`, through the
/// built binary.
@Suite(.serialized)
struct RunOptionsTests {
    /// The subprocess tests fail (never skip) without the binary; this one says so first.
    @Test func theBuiltBinaryIsFoundNextToTheTests() {
        #expect(PipelineTestWorld.binary != nil, "\(PipelineTestWorld.RunError.noBinary)")
    }

    @Test func jsonLogLinesCarryUTCTimesToTheMillisecond() throws {
        let world = try PipelineTestWorld()
        defer { world.remove() }
        let outcome = try world.run()
        #expect(outcome.status == 0)
        let lines = outcome.stderr.split(separator: "\n").filter { $0.hasPrefix("{") }
        #expect(!lines.isEmpty)
        let pattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
        for line in lines {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            let ts = object?["ts"] as? String ?? ""
            #expect(ts.wholeMatch(of: pattern) != nil, "ts \(ts) in \(line)")
        }
    }

    @Test func aConfigNamingNoRulesFolderIsAConfigErrorUnlessDotRulesExists() throws {
        let world = try PipelineTestWorld()
        defer { world.remove() }
        let config = URL(fileURLWithPath: world.configPath)
        let text = try String(contentsOf: config, encoding: .utf8)
        let kept = text.split(separator: "\n", omittingEmptySubsequences: false).filter { !$0.hasPrefix("rules:") }
        #expect(kept.count < text.split(separator: "\n", omittingEmptySubsequences: false).count)
        try kept.joined(separator: "\n").write(to: config, atomically: true, encoding: .utf8)
        // No ./rules where it runs: nothing would be checked, so nothing is ingested and the exit says why.
        let nowhere = try world.run(currentDirectory: world.directory)
        #expect(nowhere.status == 78)
        #expect(nowhere.stderr.contains("no rules folder"), "\(nowhere.stderr)")
        #expect(!FileManager.default.fileExists(atPath: world.storePath))
        // From a folder holding ./rules (the repository root), those rules are run and the reports written.
        let here = try world.run(currentDirectory: Fixtures.repoRoot)
        #expect(here.status == 0)
        #expect(here.stderr.contains("the config names no rules folder"), "\(here.stderr)")
        #expect(try !world.reportFiles().isEmpty)
    }

    @Test func dryRunWritesNothingAndReturnsTheRealExitCode() throws {
        let world = try PipelineTestWorld()
        defer { world.remove() }
        let fresh = try world.run(["--dry-run", "--fail-on", "low"])
        #expect(fresh.status == RunExitCode.findings.rawValue)
        #expect(fresh.stdout.contains("(dry run: nothing was written)"))
        #expect(!FileManager.default.fileExists(atPath: world.storePath))
        #expect(!FileManager.default.fileExists(atPath: world.reportsDirectory.path))

        #expect(try world.run().status == 0)
        let dump = try world.canonicalDump()
        let reports = try world.reportFiles()
        let statuses = try world.runStatuses()
        let metrics = world.directory.appendingPathComponent("m.prom")
        let dry = try world.run(["--dry-run", "--metrics-file", metrics.path])
        #expect(dry.status == 0)
        #expect(try world.canonicalDump() == dump)
        #expect(try world.reportFiles() == reports)
        #expect(try world.runStatuses() == statuses)
        #expect(!FileManager.default.fileExists(atPath: metrics.path))
    }

    @Test func fullRebuildReReadsEveryFileAndGivesTheSameReport() throws {
        let world = try PipelineTestWorld()
        defer { world.remove() }
        #expect(try world.run().status == 0)
        let reports = try world.reportFiles()
        let metrics = world.directory.appendingPathComponent("metrics/iapguard.prom")
        let incremental = try world.run(["--metrics-file", metrics.path])
        #expect(incremental.status == 0)
        let skippedText = try String(contentsOf: metrics, encoding: .utf8)
        #expect(skippedText.contains("iapguard_source_files_skipped{kind=\"orders\",source=\"orders\"} 1\n"))
        #expect(skippedText.contains("iapguard_source_records{kind=\"orders\",source=\"orders\"} 0\n"))

        let rebuild = try world.run(["--full-rebuild", "--metrics-file", metrics.path])
        #expect(rebuild.status == 0)
        let text = try String(contentsOf: metrics, encoding: .utf8)
        #expect(text.contains("iapguard_source_files_skipped{kind=\"orders\",source=\"orders\"} 0\n"))
        #expect(!text.contains("iapguard_source_records{kind=\"orders\",source=\"orders\"} 0\n"))
        #expect(text.contains("iapguard_run_exit_code 0\n"))
        #expect(text.contains("iapguard_findings_active{"))
        #expect(text.contains("iapguard_stage_duration_seconds{stage=\"rules\"}"))
        #expect(try world.reportFiles() == reports)
    }

    @Test func defaultWindowStartsAtTheLastSuccessfulEndMinusTheLookBack() throws {
        let world = try PipelineTestWorld()
        defer { world.remove() }
        #expect(try world.run(["--until", "2026-10-30T00:00:00Z"]).status == 0)
        let second = try world.run(["--until", "2026-11-01T00:00:00Z"])
        #expect(second.status == 0)
        #expect(
            second.stdout.contains(
                "window: 2026-10-27T00:00:00Z → 2026-11-01T00:00:00Z (report 20261101000000)"))
        let history = try String(
            contentsOf: world.reportsDirectory.appendingPathComponent("history.jsonl"), encoding: .utf8)
        #expect(history.split(separator: "\n").count == 2)
        #expect(history.contains("\"run_id\":20261030000000"))
        #expect(history.contains("\"run_id\":20261101000000"))
        let bad = try world.run(["--since", "2026-11-02T00:00:00Z"])
        #expect(bad.status == RunExitCode.usage.rawValue)
    }

    @Test func healthcheckPingsStartAndSuccessAndAFailedPingNeverFailsTheRun() throws {
        let world = try PipelineTestWorld()
        defer { world.remove() }
        let server = try HealthcheckListener()
        let ok = try world.run(["--healthcheck-url", "http://127.0.0.1:\(server.port)/hc"])
        #expect(ok.status == 0)
        let seen = server.seen
        #expect(seen.count == 2)
        #expect(seen.first?.hasPrefix("POST /hc/start ") == true)
        #expect(seen.last?.hasPrefix("POST /hc HTTP/1.1 | iapguard: run 1 ok") == true)

        let failing = try HealthcheckListener(status: 503)
        let still = try world.run(["--healthcheck-url", "http://127.0.0.1:\(failing.port)/hc"])
        #expect(still.status == 0)
        #expect(still.stderr.contains("healthcheck ping failed"))
    }
}
