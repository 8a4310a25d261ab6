import Foundation
import Testing

@testable import IAPGuard

/// A credit whose `reversed_at` is more than a clock skew earlier than its `credited_at` was never reversed: a
/// reversal cannot precede the grant (a back-dated one hides a replay's credit), so the credit is read as
/// standing and the source warns, naming the row.
@Suite struct ReversalBeforeGrantTests {
    static let granted: Int64 = 1_791_676_800_000

    static func credit(reversedAt: Int64) throws -> Credit {
        let line =
            #"{"credit_id":"c-9","user_id":"u-9","units":6500,"credited_at":\#(granted),"reversed_at":\#(reversedAt),"reversal_reason":"rollback"}"#
        return try BackendRowMapper.credit(try JSONObject.parse(Array(line.utf8)))
    }

    @Test func aReversalDatedBeforeTheGrantLeavesTheCreditStanding() throws {
        let backdated = try Self.credit(reversedAt: Self.granted - 86_400_000)
        #expect(backdated.reversedAt == nil)
        #expect(backdated.reversalBeforeGrant == Self.granted - 86_400_000)
        // The same from a CSV or SQL row.
        let row = try BackendRowMapper.credit([
            "credit_id": "c-9", "user_id": "u-9", "units": "6500", "credited_at": "\(Self.granted)",
            "reversed_at": "\(Self.granted - 5_001)",
        ])
        #expect(row.reversedAt == nil && row.reversalBeforeGrant == Self.granted - 5_001)
        // A rollback at the grant's millisecond or later is a reversal.
        for reversed in [Self.granted, Self.granted + 5_000] {
            let credit = try Self.credit(reversedAt: reversed)
            #expect(credit.reversedAt == reversed && credit.reversalBeforeGrant == nil)
        }
    }

    @Test func aRollbackStampedUpToFiveSecondsBeforeTheGrantIsAReversalAtTheGrant() throws {
        // The grant and its rollback stamped by two servers whose clocks differ (300 ms, 5 s).
        for early in [Int64(300), 5_000] {
            let skewed = try Self.credit(reversedAt: Self.granted - early)
            #expect(skewed.reversedAt == Self.granted && skewed.reversalBeforeGrant == nil)
        }
    }

    @Test func theSourceWarnsNamingTheRowsOfBackdatedReversals() throws {
        let source = Config.Source(
            name: "credits", kind: .credits, format: .jsonl, path: URL(fileURLWithPath: "/c"), query: nil)
        var health = SourceHealth(source: source)
        var batch = IngestBatch()
        batch.credits = [
            (try Self.credit(reversedAt: Self.granted + 1), "credits", "credits.jsonl:2"),
            (try Self.credit(reversedAt: Self.granted - 60_000), "credits", "credits.jsonl:3"),
        ]
        health.observe(batch)
        let warnings = health.verdict(hadEarlierRecords: true).warnings
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("1 credit(s) reversed before they were granted") == true)
        #expect(warnings.first?.contains("credits.jsonl:3 (c-9)") == true)
    }
}
