import Foundation
import Testing

@testable import IAPGuard

@Suite struct RunWindowTests {
    static func millis(_ text: String) -> Int64 { TimeParser.epochMillis(text) ?? -1 }

    @Test func reportIDIsTheWindowEndAsUTCDigits() {
        #expect(RunWindow.reportID(until: Self.millis("2026-11-01T00:00:00Z")) == 20_261_101_000_000)
        #expect(RunWindow.reportID(until: Self.millis("2024-02-29T23:59:59.999Z")) == 20_240_229_235_959)
        #expect(RunWindow.reportID(until: 0) == 19_700_101_000_000)
        #expect(
            RunWindow.reportID(until: Self.millis("2025-03-01T00:00:00Z"))
                > RunWindow.reportID(until: Self.millis("2025-02-28T23:59:59Z")))
    }

    func store(runs: [(status: String, until: String)]) throws -> SQLiteStore {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        for run in runs {
            let id = try store.beginRun(
                RunStart(
                    startedAt: 0, windowSince: nil, windowUntil: Self.millis(run.until), configHash: "h",
                    toolVersion: "t"))
            try store.finishRun(id, status: run.status, finishedAt: 1, summaryJSON: nil)
        }
        return store
    }

    @Test func defaultSinceIsTheLastSuccessfulWindowEndMinusTheLookBack() throws {
        let store = try store(runs: [
            ("ok", "2026-10-01T00:00:00Z"), ("ok", "2026-10-02T00:00:00Z"), ("partial", "2026-10-03T00:00:00Z"),
            ("ok", "2026-10-09T00:00:00Z"),
        ])
        let until = Self.millis("2026-10-05T00:00:00Z")
        let window = try RunWindow.resolve(
            options: .init(until: until), store: store, lookbackHours: 72, now: Self.millis("2030-01-01T00:00:00Z"))
        #expect(window.until == until)
        #expect(window.watermark == Self.millis("2026-10-02T00:00:00Z"))
        #expect(window.since == Self.millis("2026-09-29T00:00:00Z"))
    }

    @Test func explicitSinceFullRebuildAndEmptyStore() throws {
        let empty = try store(runs: [])
        let now = Self.millis("2026-10-05T12:00:00Z")
        let first = try RunWindow.resolve(options: .init(), store: empty, lookbackHours: 72, now: now)
        #expect(first.since == nil && first.until == now)

        let store = try store(runs: [("ok", "2026-10-04T00:00:00Z")])
        let rebuild = try RunWindow.resolve(
            options: .init(fullRebuild: true), store: store, lookbackHours: 72, now: now)
        #expect(rebuild.since == nil)
        let explicit = try RunWindow.resolve(
            options: .init(since: Self.millis("2026-10-01T00:00:00Z")), store: store, lookbackHours: 72, now: now)
        #expect(explicit.since == Self.millis("2026-10-01T00:00:00Z"))
        #expect(throws: WindowError.self) {
            _ = try RunWindow.resolve(options: .init(since: now, until: now), store: store, lookbackHours: 72, now: now)
        }  // Report folders are named to the second: a sub-second --until would share one with its whole second.
        let error = try #require(throws: WindowError.self) {
            _ = try RunWindow.resolve(options: .init(until: now + 500), store: store, lookbackHours: 72, now: now)
        }
        #expect(error.description.contains("whole second"))
    }

    @Test func lookbackHoursIsAConfigKey() throws {
        let directory = TestScratch.root.appendingPathComponent(
            "iapguard-lb-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let base = "apps:\n  - bundle_id: com.example.coins\n"
        let url = directory.appendingPathComponent("c.yml")
        try Data(base.utf8).write(to: url)
        #expect(try Config.load(from: url).lookbackHours == 72)
        try Data((base + "lookback_hours: 168\n").utf8).write(to: url)
        #expect(try Config.load(from: url).lookbackHours == 168)
        try Data((base + "lookback_hours: -1\n").utf8).write(to: url)
        #expect(throws: ConfigError.self) { _ = try Config.load(from: url) }
    }

    @Test func undoImagesOlderThanTheHorizonArePrunedAndTheirWindowsRefused() throws {
        let store = try store(runs: [
            ("ok", "2026-08-01T00:00:00Z"), ("ok", "2026-09-05T00:00:00Z"), ("ok", "2026-09-20T00:00:00Z"),
        ])
        let rewind = FindingRewind(database: store.connection)
        for run in 1...3 {
            for finding in ["Fa", "Fb"] {
                try store.connection.run(
                    "INSERT INTO finding_undo (run_id, finding_id, pre_image) VALUES (?, ?, NULL)",
                    [.integer(Int64(run)), .text(finding)])
            }
        }
        let day: Int64 = 86_400_000
        // The latest window ends 2026-10-01: with 30 days, runs ending before 2026-09-01 lose their images.
        let deleted = try rewind.prune(horizon: 30 * day, latestUntil: Self.millis("2026-10-01T00:00:00Z"))
        #expect(deleted == 2)
        let kept = try store.connection.query("SELECT DISTINCT run_id FROM finding_undo ORDER BY run_id", [])
        #expect(kept.map { $0[0].integerValue } == [2, 3])
        #expect(try rewind.prunedThrough() == Self.millis("2026-08-01T00:00:00Z"))
        // Pruning again deletes nothing and keeps the mark.
        #expect(try rewind.prune(horizon: 30 * day, latestUntil: Self.millis("2026-10-01T00:00:00Z")) == 0)
        #expect(try rewind.prunedThrough() == Self.millis("2026-08-01T00:00:00Z"))

        let now = Self.millis("2026-10-02T00:00:00Z")
        #expect(throws: WindowError.self) {
            _ = try RunWindow.resolve(
                options: .init(until: Self.millis("2026-08-01T00:00:00Z")), store: store, lookbackHours: 72, now: now)
        }
        #expect(throws: WindowError.self) {
            _ = try RunWindow.resolve(
                options: .init(until: Self.millis("2026-07-15T00:00:00Z")), store: store, lookbackHours: 72, now: now)
        }
        let later = try RunWindow.resolve(
            options: .init(until: Self.millis("2026-09-05T00:00:00Z")), store: store, lookbackHours: 72, now: now)
        #expect(later.until == Self.millis("2026-09-05T00:00:00Z"))
    }

    @Test func rewindHorizonDaysIsAConfigKey() throws {
        let file = URL(fileURLWithPath: "/tmp/c.yml")
        let base = "apps:\n  - bundle_id: com.example.coins\n"
        #expect(try Config.parse(base, file: file).rewindHorizonDays == 30)
        #expect(try Config.parse(base + "rewind_horizon_days: 90\n", file: file).rewindHorizonDays == 90)
        #expect(throws: ConfigError.self) { _ = try Config.parse(base + "rewind_horizon_days: 0\n", file: file) }
    }
}
