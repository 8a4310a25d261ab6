import Foundation
import Testing

@testable import IAPGuard

/// The optional consumption fields of a credit: what the backend saw spent, and when.
@Suite struct CreditConsumptionTests {
    /// The fields every credit needs.
    static let required = ["user_id": "u-1", "units": "100", "credited_at": "1767225600000"]

    @Test func consumedUnitsAndTimeAreMappedWhenTheBackendTracksThem() throws {
        let credit = try BackendRowMapper.credit([
            "credit_id": "c1", "transaction_id": "1", "user_id": "u-1", "units": "100", "credited_at": "1767225600000",
            "consumed_units": "60",
            "consumed_at": "2026-01-02T00:00:00Z",
        ])
        #expect(credit.consumedUnits == 60)
        #expect(credit.consumedAt == TimeParser.epochMillis("2026-01-02T00:00:00Z"))
        let untracked = try BackendRowMapper.credit(Self.required.merging(["credit_id": "c2"]) { $1 })
        #expect(untracked.consumedUnits == nil && untracked.consumedAt == nil)
    }

    @Test func consumedUnitsWithoutATimeOrBelowZeroAreRecordErrorsNamingTheField() {
        #expect(throws: RecordError.self) {
            try BackendRowMapper.credit(Self.required.merging(["credit_id": "c1", "consumed_units": "5"]) { $1 })
        }
        #expect(throws: RecordError.self) {
            try BackendRowMapper.credit(
                Self.required.merging(["credit_id": "c1", "consumed_units": "-1", "consumed_at": "1767225600000"]) {
                    $1
                })
        }
        do {
            _ = try BackendRowMapper.credit(Self.required.merging(["credit_id": "c1", "consumed_units": "5"]) { $1 })
        } catch {
            #expect("\(error)".contains("consumed_at"))
        }
    }

    @Test func theCreditsViewCarriesConsumptionAndAReIngestWithConsumptionIsAnUpdate() throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        var credit = Credit(creditID: "c1")
        credit.transactionID = "1"
        credit.units = 100
        var batch = IngestBatch()
        batch.credits = [(credit, "credits", "credits.jsonl:1")]
        #expect(try store.write(batch, runID: 1).inserted == 1)
        credit.consumedUnits = 100
        credit.consumedAt = 1_767_225_600_000
        batch.credits = [(credit, "credits", "credits.jsonl:1")]
        #expect(try store.write(batch, runID: 2).updated == 1)
        let row = try #require(try store.rows("SELECT consumed_units, consumed_at FROM credits").first)
        #expect(row == [.integer(100), .integer(1_767_225_600_000)])
    }
}
