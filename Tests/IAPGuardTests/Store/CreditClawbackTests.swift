import Foundation
import Testing

@testable import IAPGuard

/// Clawbacks written as ledger rows of their own (negative units) reverse the credits they take back in
/// full, in whichever run either arrived; anything else leaves the credits standing (store level).
@Suite struct CreditClawbackTests {
    static let day: Int64 = 86_400_000
    static let t0: Int64 = 1_780_000_000_000

    static func entry(
        _ id: String, units: Int64, at: Int64, tx: String? = "1001", order: String? = nil, user: String = "u1",
        reason: String? = nil
    ) -> Credit {
        var c = Credit(creditID: id)
        c.transactionID = tx
        c.orderID = order
        c.userID = user
        c.productID = "com.example.coins.pack1200"
        c.units = units
        c.creditedAt = at
        c.reversalReason = reason
        return c
    }

    /// Writes each group of entries as one run, applying the clawbacks after each (as the pipeline does
    /// after ingest); returns the run ids.
    @discardableResult
    static func runs(_ runs: [[Credit]], on store: any SQLBackedStore) throws -> [Int64] {
        let batches = runs.map { entries in
            var batch = IngestBatch()
            batch.credits = entries.enumerated().map { ($0.element, "credits", "credits.jsonl:\($0.offset + 1)") }
            return batch
        }
        return try LedgerPassRuns.runs(batches, on: store) { try $0.applyCreditClawbacks(runID: $1) }
    }

    /// `credit_id: reversed_at reason` of every credit, by id.
    static func credits(_ store: any SQLBackedStore) throws -> [String: String] {
        var result: [String: String] = [:]
        for row in try store.rows("SELECT credit_id, reversed_at, reversal_reason FROM credits") {
            result[row[0].textValue ?? ""] =
                "\(row[1].integerValue.map(String.init) ?? "standing") \(row[2].textValue ?? "")"
                .trimmingCharacters(in: .whitespaces)
        }
        return result
    }

    /// The whole behaviour on one store (also run on PostgreSQL by `PostgresStoreTests`).
    static func checkLedger(on makeStore: () throws -> any SQLBackedStore) throws {
        let grant = entry("c1", units: 1200, at: t0)
        let back = entry("c1-back", units: -1200, at: t0 + 5 * day, reason: "refund")
        for (name, order) in [("credit first", [[grant], [back]]), ("clawback first", [[back], [grant]])] {
            let store = try makeStore()
            let runIDs = try runs(order, on: store)
            #expect(try credits(store) == ["c1": "\(t0 + 5 * day) refund (ledger row c1-back)"], "\(name)")
            // The credit is marked changed in the run that reversed it, and the change is logged.
            #expect(
                try store.scalar("SELECT last_run_id FROM credits WHERE credit_id = 'c1'", [:])?.integerValue
                    == runIDs[1], "\(name)")
            #expect(
                try store.rows(
                    "SELECT run_id FROM change_log WHERE entity = 'credit' AND entity_key = 'c1' AND field = 'reversed_at'"
                ).map { $0[0].integerValue } == [runIDs[1]], "\(name)")
            // Idempotent: applying again and reading the same entries again change nothing.
            let before = try PostgresStoreTests.dump(store)
            #expect(try store.applyCreditClawbacks(runID: runIDs[1]) == 0, "\(name)")
            try runs([[grant, back]], on: store)
            #expect(try PostgresStoreTests.dump(store) == before, "\(name)")
        }

        // A clawback only covers what it takes back in full: half leaves the credit standing, the other half
        // reverses it.
        let partial = try makeStore()
        try runs([[grant, entry("c1-half", units: -600, at: t0 + day)]], on: partial)
        #expect(try credits(partial) == ["c1": "standing"])
        try runs([[entry("c1-rest", units: -600, at: t0 + 2 * day)]], on: partial)
        #expect(try credits(partial) == ["c1": "\(t0 + 2 * day) clawback (ledger row c1-rest)"])

        // Bought (or granted) again after the clawback: the new credit stands.
        let again = try makeStore()
        try runs([[grant, back, entry("c2", units: 1200, at: t0 + 9 * day)]], on: again)
        #expect(try credits(again) == ["c1": "\(t0 + 5 * day) refund (ledger row c1-back)", "c2": "standing"])

        // A correction: the grant taken back and the right amount granted in the same millisecond. The clawback
        // reverses the first grant; the new one stands.
        let corrected = try makeStore()
        try runs(
            [[grant, entry("c1-undo", units: -1200, at: t0 + day), entry("c1-fixed", units: 1320, at: t0 + day)]],
            on: corrected)
        #expect(
            try credits(corrected) == [
                "c1": "\(t0 + day) clawback (ledger row c1-undo)", "c1-fixed": "standing",
            ])

        // Another account's or another transaction's clawback takes nothing back from this credit.
        let other = try makeStore()
        try runs(
            [
                [
                    grant, entry("x-user", units: -1200, at: t0 + day, user: "u2"),
                    entry("x-tx", units: -1200, at: t0 + day, tx: "1002"),
                ]
            ],
            on: other)
        #expect(try credits(other) == ["c1": "standing"])

        // A clawback naming only the order covers the order's credits; one naming a transaction also covers
        // a credit of the same order that names no transaction.
        let byOrder = try makeStore()
        try runs(
            [
                [
                    entry("o1-grant", units: 500, at: t0, tx: nil, order: "o-1"),
                    entry("o1-back", units: -500, at: t0 + day, tx: nil, order: "o-1"),
                    entry("o2-grant", units: 500, at: t0, tx: nil, order: "o-2"),
                    entry("o2-back", units: -500, at: t0 + day, tx: "1009", order: "o-2"),
                ]
            ], on: byOrder)
        #expect(
            try credits(byOrder) == [
                "o1-grant": "\(t0 + day) clawback (ledger row o1-back)",
                "o2-grant": "\(t0 + day) clawback (ledger row o2-back)",
            ])
    }

    @Test func clawbackRowsReverseTheCreditsTheyTakeBackInFullAndNothingElse() throws {
        try Self.checkLedger(on: { try LedgerPassRuns.memoryStore() })
    }

    @Test func aClawbackRowIsNotACredit() throws {
        let store = try LedgerPassRuns.memoryStore()
        try Self.runs([[Self.entry("c1-back", units: -1200, at: Self.t0)]], on: store)
        #expect(try Self.credits(store).isEmpty)
        #expect(try store.scalar("SELECT COUNT(*) FROM credit_clawback", [:])?.integerValue == 1)
    }
}
