import Foundation
import Testing

@testable import IAPGuard

/// `fx_rates` reads the ECB's own `eurofxref-hist.csv` as downloaded, beside the long `date,currency,per_eur`
/// layout, told apart by the header.
@Suite struct ECBHistoryFileTests {
    static func read(_ text: String) throws -> FXRateFile.Contents {
        let url = TestScratch.root.appendingPathComponent("ecb-\(UUID().uuidString).csv")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data(text.utf8).write(to: url)
        return try FXRateFile.read(url, source: "ecb")
    }

    static func day(_ text: String) -> Int64 { TimeParser.rfc3339(text) ?? -1 }

    /// The head of the ECB's file: newest first, `N/A` cells, a trailing comma on every line.
    static let ecb = """
        Date,USD,JPY,BGN,CYP,TRY,
        2026-08-04,1.1571,170.53,1.9558,N/A,47.0221,
        2026-08-03,1.1583,170.43,1.9558,N/A,46.9942,
        2026-08-01,1.1404,172.01,1.9558,N/A,,

        """

    @Test func theECBsOwnFileIsReadAsDownloaded() throws {
        let contents = try Self.read(Self.ecb)
        #expect(contents.badRows.isEmpty && contents.conflicts.isEmpty && contents.lacking.isEmpty)
        #expect(contents.rates.count == 11, "N/A and empty cells are no rate, not an error")
        let usd = contents.rates.filter { $0.currency == "USD" }.map(\.rateDate)
        #expect(usd == [Self.day("2026-08-04"), Self.day("2026-08-03"), Self.day("2026-08-01")])
        let try3 = contents.rates.first { $0.currency == "TRY" && $0.rateDate == Self.day("2026-08-03") }
        #expect(try3?.perEUR == 46.9942)
        #expect(!contents.rates.contains { $0.currency == "CYP" })
    }

    @Test func aWideFileWithoutTheTrailingCommaReadsTheSame() throws {
        let text = Self.ecb.split(separator: "\n").map { $0.hasSuffix(",") ? String($0.dropLast()) : String($0) }
            .joined(separator: "\n")
        let contents = try Self.read(text)
        #expect(contents.rates.count == 11 && contents.badRows.isEmpty)
    }

    @Test func aBadCellQuarantinesItsRowOnceAndKeepsTheGoodCells() throws {
        let contents = try Self.read("Date,USD,JPY,TRY,\n2026-08-04,1.1571,abc,-3,\n2026-08-03,1.1583,170.43,46.99,\n")
        #expect(contents.badRows.count == 1)
        #expect(contents.badRows.first?.location.hasSuffix(":2") == true)
        #expect(contents.badRows.first?.reason.contains("JPY") == true)
        #expect(contents.badRows.first?.reason.contains("TRY") == true)
        #expect(contents.lacking == ["JPY on 2026-08-04", "TRY on 2026-08-04"])
        #expect(contents.rates.count == 4, "USD on the bad row and the whole good row")
    }

    /// A cell no currency's rate could be (a unit error, a typo) is bad like a negative one; its row's good
    /// cells are kept.
    @Test func aRateOutsideAnyCurrencysRangeIsABadCell() throws {
        let contents = try Self.read("Date,USD,JPY,\n2026-08-04,1.1571,1e-300,\n")
        #expect(contents.badRows.count == 1)
        #expect(
            contents.badRows.first?.reason.contains(#"JPY: "1e-300" is outside any currency's plausible rate"#)
                == true, "\(contents.badRows)")
        #expect(contents.lacking == ["JPY on 2026-08-04"])
        #expect(contents.rates.map(\.currency) == ["USD"])
    }

    @Test func aDayTwiceWithDifferentRatesIsAConflictNamingBothLines() throws {
        let contents = try Self.read("Date,USD,\n2026-08-04,1.1571,\n2026-08-04,1.2000,\n")
        #expect(contents.conflicts.count == 1)
        #expect(contents.conflicts.first?.contains(":2 and :3") == true)
        #expect(contents.rates.isEmpty)
    }

    @Test func aHeaderOfNeitherLayoutIsRefusedNamingBoth() throws {
        for header in ["Date,US Dollar,Yen", "when,USD,JPY", "Date", "date,currency"] {
            #expect(throws: SourceError.self, "\(header)") { _ = try Self.read(header + "\n2026-08-04,1,2\n") }
        }
    }

    @Test func theLongLayoutStillReads() throws {
        let contents = try Self.read("date,currency,per_eur\n2026-08-03,USD,1.1702\n2026-08-03,TRY,48.7527\n")
        #expect(contents.rates.map(\.currency) == ["USD", "TRY"])
    }
}
