import Foundation
import Testing

@testable import IAPGuard

/// An order or credit dated before the App Store opened is almost always epoch seconds read as milliseconds
/// (2026 in seconds is January 1970 in milliseconds). The records are kept as read, and the source warns,
/// naming the first rows, so that the operator sees why the rules' dates look wrong.
@Suite struct DatedBeforeAppStoreTests {
    static let source = Config.Source(
        name: "credits", kind: .credits, format: .jsonl, path: URL(fileURLWithPath: "/c"), query: nil)

    static func credit(_ creditedAt: String) throws -> Credit {
        let line =
            #"{"credit_id":"c-1","transaction_id":"2000000000000001","user_id":"u-1","units":100,"credited_at":\#(creditedAt)}"#
        return try BackendRowMapper.credit(try JSONObject.parse(Array(line.utf8)))
    }

    @Test func epochSecondsWhereMillisecondsAreExpectedAreAWarningNamingTheRows() throws {
        var health = SourceHealth(source: Self.source)
        var batch = IngestBatch()
        batch.credits = [
            (try Self.credit("1788638119"), "credits", "credits.jsonl:1"),
            (try Self.credit("1788638119000"), "credits", "credits.jsonl:2"),
            (try Self.credit("\"1999-12-31T23:59:59Z\""), "credits", "credits.jsonl:3"),
        ]
        health.observe(batch)
        let verdict = health.verdict(hadEarlierRecords: true)
        #expect(verdict.errors.isEmpty)
        #expect(verdict.warnings.count == 1)
        let warning = try #require(verdict.warnings.first)
        #expect(warning.hasPrefix("2 record(s) dated before the App Store opened (2008-07-10)"))
        #expect(warning.contains("credits.jsonl:1 (credited_at 1970-01-21T16:50:38.119Z)"))
        #expect(warning.contains("credits.jsonl:3 (credited_at 1999-12-31T23:59:59Z)"))
        #expect(!warning.contains("credits.jsonl:2"))
    }

    @Test func recordsFromTheAppStoreEraGiveNoWarning() throws {
        var health = SourceHealth(source: Self.source)
        var batch = IngestBatch()
        batch.credits = [(try Self.credit("\"2008-07-10T00:00:00Z\""), "credits", "credits.jsonl:1")]
        health.observe(batch)
        #expect(health.verdict(hadEarlierRecords: true).warnings.isEmpty)
    }
}
