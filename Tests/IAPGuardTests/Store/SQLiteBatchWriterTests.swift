import Foundation
import Testing

@testable import IAPGuard
@testable import IAPGuardSampleWorld

/// The SQLite write path (insert first, compare only when the key exists) must store exactly what the
/// row-by-row reference path stores: the same rows in the same rowid order, the same `change_log`, the same
/// counts, and nothing at all when an identical record comes again.
@Suite struct SQLiteBatchWriterTests {
    /// Every row of every table the write path touches, rowids included, in rowid order.
    static func dump(_ store: SQLiteStore) throws -> [String] {
        var lines: [String] = []
        for table in [
            "apple_sighting", "apple_transaction", "backend_order", "credit", "notification", "quarantine",
            "change_log",
        ] {
            for row in try store.database.query("SELECT rowid, * FROM \(table) ORDER BY rowid") {
                lines.append(
                    table + ": " + row.map { $0.isNull ? "NULL" : "'\($0.description)'" }.joined(separator: "|"))
            }
        }
        return lines
    }

    static func freshStore() throws -> SQLiteStore {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        return store
    }

    static func run(_ store: SQLiteStore, _ n: Int64) throws -> Int64 {
        try store.beginRun(
            RunStart(startedAt: n, windowSince: nil, windowUntil: nil, configHash: "h", toolVersion: "t"))
    }

    /// Writes `runs` (each a list of batches, one run each) through the fast path and row by row; expects
    /// identical stores and counts.
    static func expectSameAsRowByRow(_ runs: [[IngestBatch]]) throws -> (SQLiteStore, [WriteCounts]) {
        let fast = try freshStore()
        let reference = try freshStore()
        var fastCounts: [WriteCounts] = []
        var referenceCounts: [WriteCounts] = []
        for (index, batches) in runs.enumerated() {
            let fastRun = try run(fast, Int64(index))
            let referenceRun = try run(reference, Int64(index))
            var a = WriteCounts()
            var b = WriteCounts()
            for batch in batches {
                a = a + (try fast.write(batch, runID: fastRun))
                b = b + (try reference.writeRowByRow(batch, runID: referenceRun))
            }
            fastCounts.append(a)
            referenceCounts.append(b)
        }
        #expect(fastCounts == referenceCounts)
        let expected = try dump(reference)
        let actual = try dump(fast)
        #expect(actual.count == expected.count)
        #expect(actual == expected, "\(firstDifference(actual, expected))")
        return (fast, fastCounts)
    }

    @Test func handWrittenBatchesMatchTheRowByRowPathRowForRow() throws {
        // Repeats inside a batch, updates with change-log entries, canonical precedence, failed sightings,
        // then the first batch again (all unchanged).
        let (store, counts) = try Self.expectSameAsRowByRow([PostgresStoreTests.batches()])
        #expect(counts[0].records == PostgresStoreTests.batches().reduce(0) { $0 + $1.recordCount })
        #expect(try store.database.scalar("SELECT COUNT(*) FROM change_log")?.integerValue ?? 0 > 0)
    }

    @Test func notificationsAreInsertedReplacedByABetterCopyAndOtherwiseUnchanged() throws {
        func notification(_ status: VerificationOutcome.Status, _ hash: String) -> AppleNotification {
            var n = AppleNotification(notificationUUID: "uuid-1")
            n.notificationType = "REFUND"
            n.transactionID = "1001"
            n.verification = VerificationOutcome(status: status)
            n.sourceName = "asn2"
            n.sourceRef = "n.jsonl:\(hash)"
            n.payloadHash = hash
            return n
        }
        var batch = IngestBatch()
        batch.notifications = [
            notification(.unverified, "a"), notification(.unverified, "b"), notification(.verified, "c"),
            notification(.failed, "d"),
        ]
        let (store, counts) = try Self.expectSameAsRowByRow([[batch], [batch]])
        #expect(counts[0].inserted == 1)
        #expect(counts[0].updated == 1)
        #expect(counts[0].unchanged == 2)
        #expect(counts[1].unchanged == 4)
        #expect(
            try store.database.scalar("SELECT verification FROM notification WHERE notification_uuid = 'uuid-1'")
                == .text("verified"))
    }

    @Test func anIdenticalRecordAgainChangesNothingNotEvenItsRunIDs() throws {
        // Distinct keys (a batch that repeats a key with other content would update it on every replay).
        let batch = PostgresStoreTests.batches()[1]
        let (store, counts) = try Self.expectSameAsRowByRow([[batch], [batch]])
        #expect(counts[0].inserted == counts[0].records)
        #expect(counts[1].inserted == 0)
        #expect(counts[1].updated == 0)
        #expect(counts[1].unchanged == counts[1].records)
        for table in ["apple_transaction", "backend_order", "credit"] {
            #expect(try store.database.scalar("SELECT MAX(last_run_id) FROM \(table)") == .integer(1), "\(table)")
        }
        #expect(try store.database.scalar("SELECT COUNT(*) FROM change_log WHERE run_id = 2") == .integer(0))
    }

    @Test func theRowHashIsTheSHA256OfTheJoinedValueText() {
        let values: [SQLValue] = [
            .text("o-1"), .null, .integer(-990), .integer(0), .text("é ✓"), .real(1.5), .text(""),
        ]
        let text = values.map { $0.isNull ? "\u{0}" : $0.description }.joined(separator: "\u{1F}")
        #expect(StoreRecords.rowHash(values) == Hashing.sha256Hex(text))
        #expect(StoreRecords.rowHash([]) == Hashing.sha256Hex(""))
    }

    /// A small generated world's every source, verified, as batches.
    static let worldBatches: Result<[IngestBatch], any Error> = Result {
        let directory = TestScratch.root.appendingPathComponent(
            "iapguard-batchwriter-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        _ = try WorldGenerator(
            options: WorldGenerator.Options(seed: 11, users: 120, days: 10, end: WorldGenerator.defaultEnd)
        ).write(to: directory)
        let config = try Config.load(from: directory.appendingPathComponent("iapguard.yml"))
        let verifier = try JWSVerifier.make(for: config)
        let scratch = try freshStore()
        var batches: [IngestBatch] = []
        for source in config.sources {
            let ingestor = SourceIngestor(source: source, verifier: verifier, configHash: config.hash, batchSize: 97)
            _ = try ingestor.ingest(store: scratch, runID: 1, sink: { batches.append($0) })
        }
        return batches
    }

    @Test func aGeneratedWorldIngestedThenChangedMatchesTheRowByRowPath() throws {
        let batches = try Self.worldBatches.get()
        #expect(batches.contains { !$0.sightings.isEmpty } && batches.contains { !$0.notifications.isEmpty })
        // Run 3: every order paid later and every credit reversed, so updates and change logs are exercised.
        let changed = batches.map { batch -> IngestBatch in
            var copy = batch
            copy.orders = batch.orders.map { entry in
                var order = entry.order
                order.status = "refunded"
                return (order, entry.sourceName, entry.sourceRef)
            }
            copy.credits = batch.credits.map { entry in
                var credit = entry.credit
                credit.reversedAt = 1_790_000_000_000
                return (credit, entry.sourceName, entry.sourceRef)
            }
            return copy
        }
        let (store, counts) = try Self.expectSameAsRowByRow([batches, batches, changed])
        #expect(counts[0].inserted > 0)
        #expect(counts[1].inserted == 0 && counts[1].updated == 0)
        #expect(counts[2].updated > 0)
        // Run ids 1, 2, 3: the identical replay logs nothing; the changed one logs every change.
        #expect(try store.database.scalar("SELECT COUNT(*) FROM change_log WHERE run_id = 2") == .integer(0))
        #expect(try store.database.scalar("SELECT COUNT(*) FROM change_log WHERE run_id = 3")?.integerValue ?? 0 > 0)
        #expect(try store.database.scalar("SELECT COUNT(*) FROM backend_order WHERE last_run_id = 2") == .integer(0))
    }
}
