import Foundation
import Testing

@testable import IAPGuard

// The pull's own queries (discovery, refund polling) on PostgreSQL: the same calls and rows as on SQLite.
@Suite(.enabled(if: TestPostgres.available, "no PostgreSQL server for the tests (see PostgresAvailabilityTests)"))
struct PostgresPullTests {
    @Test func aPullAsksAndStoresTheSameOnPostgres() throws {
        var results: [[String]] = []
        for postgres in [false, true] {
            let world = try ApplePullerTests.populated()
            world.fake.addHistory(
                try world.signedTransaction("2900000000000001"), transactionID: "2900000000000001",
                environment: .production, customer: "ordered")
            let config = try world.config(environments: "[Production]")
            let store: any SQLBackedStore =
                postgres ? try TestPostgres.freshStore("pull") : try world.openStore(config)
            var batch = IngestBatch()
            for (index, id) in ApplePullerTests.credited.enumerated() {
                var credit = Credit(creditID: "c-\(id)")
                credit.transactionID = id
                credit.userID = "u-\(index % 3)"
                credit.units = 600
                batch.credits.append((credit, "credits", "test:\(index)"))
            }
            batch.orders = [PullCoverageTests.order("o1", transaction: "2900000000000001", bundle: nil)]
            _ = try store.write(batch, runID: 0)
            var lines: [String] = []
            for _ in 0..<2 {
                let runID = try store.beginRun(
                    RunStart(startedAt: 0, windowSince: nil, windowUntil: nil, configHash: "t", toolVersion: "t"))
                let summary = try #require(try world.puller(config).pull(store: store, runID: runID).first)
                #expect(summary.errors.isEmpty, "\(summary.errors)")
                lines.append(
                    "calls \(summary.calls) history \(summary.historyTransactions) refunds \(summary.refundTransactions) customers \(summary.refundCustomers) notifications \(summary.notifications)"
                )
            }
            for sql in [
                "SELECT transaction_id, verification, revocation_date FROM transactions ORDER BY transaction_id",
                "SELECT notification_uuid, notification_type FROM notifications ORDER BY notification_uuid",
            ] {
                lines += try store.rows(sql).map { $0.map { $0.textValue ?? "NULL" }.joined(separator: "|") }
            }
            results.append(lines)
        }
        #expect(results[0] == results[1])
        #expect(results[0].contains { $0.hasPrefix("2900000000000001|verified") })
    }
}
