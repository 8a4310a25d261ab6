import Foundation
import Testing

@testable import IAPGuard

/// The parser problems the malformed corpus and the fuzzers found, pinned one by one.
@Suite struct ParserFixTests {
    @Test func calendarDatesThatDoNotExistAreRejected() {
        #expect(TimeParser.rfc3339("2026-02-30") == nil)
        #expect(TimeParser.rfc3339("2026-02-29") == nil)
        #expect(TimeParser.rfc3339("2026-04-31T10:00:00Z") == nil)
        #expect(TimeParser.rfc3339("2028-02-29") == TimeParser.rfc3339("2028-03-01").map { $0 - 86_400_000 })
        #expect(TimeParser.rfc3339("2000-02-29") != nil)
        #expect(TimeParser.rfc3339("1900-02-29") == nil)
        #expect(TimeParser.rfc3339("2026-12-31T23:59:59Z") == 1_798_761_599_000)
    }

    /// PostgreSQL writes a timestamptz as `2026-10-14 10:00:07.123+00`, and `%z` writes `+0530`: both are the
    /// same instant as the RFC 3339 form; anything looser is still refused.
    @Test func offsetsWrittenAsHoursOrWithoutAColonAreRead() {
        let utc = TimeParser.rfc3339("2026-10-14T10:00:07.123Z")
        #expect(utc != nil)
        #expect(TimeParser.rfc3339("2026-10-14 10:00:07.123+00") == utc)
        #expect(TimeParser.rfc3339("2026-10-14 15:30:07.123+0530") == utc)
        #expect(TimeParser.rfc3339("2026-10-14 05:00:07.123-05") == utc)
        #expect(TimeParser.rfc3339("2026-10-14T15:30:07.123+05:30") == utc)
        for loose in [
            "2026-10-14T10:00:07+5", "2026-10-14T10:00:07+053", "2026-10-14T10:00:07+25", "2026-10-14T10:00:07+0561",
        ] {
            #expect(TimeParser.rfc3339(loose) == nil, "\(loose)")
        }
    }

    @Test func moreThanThreeFractionalDigitsAreCutToMillisecondsNotATrap() {
        // Found by the corpus: `2026-01-01T10:00:00.123456Z` trapped on an invalid range.
        #expect(TimeParser.rfc3339("1970-01-01T00:00:00.123456Z") == 123)
        #expect(TimeParser.rfc3339("1970-01-01T00:00:00.1234567890123Z") == 123)
        #expect(TimeParser.rfc3339("1970-01-01T00:00:00.5Z") == 500)
        #expect(TimeParser.rfc3339("1970-01-01T00:00:00.12Z") == 120)
        #expect(TimeParser.rfc3339("1970-01-01T00:00:00.Z") == nil)
    }

    @Test func aDecimalJustAboveTheLargestMilliunitIsRejectedNotATrap() {
        #expect(Money.milliunits(fromDecimal: "9223372036854775.807") == Int64.max)
        #expect(Money.milliunits(fromDecimal: "9223372036854775.808") == nil)
        #expect(Money.milliunits(fromDecimal: "9223372036854775.999") == nil)
        #expect(Money.milliunits(fromDecimal: "-9223372036854775.807") == -Int64.max)
    }

    @Test func jsonBooleansAreToldApartFromNumbers() throws {
        let object = try JSONObject.parse(Array(#"{"t":true,"f":false,"one":1,"zero":0,"big":128,"x":1.5}"#.utf8))
        #expect(throws: RecordError.self) { try object.string("t") }
        #expect(throws: RecordError.self) { try object.int64("f") }
        #expect(try object.string("one") == "1")
        #expect(try object.int64("zero") == 0)
        #expect(try object.int64("big") == 128)
        #expect(try object.string("x") == "1.5")
        do {
            _ = try object.int64("t")
        } catch let error as RecordError {
            #expect(error.message == "t: expected a whole number, found a boolean")
        }
    }

    @Test func aByteOrderMarkAtTheStartOfAFileIsIgnored() throws {
        let folder = TestScratch.root.appendingPathComponent("iapguard-bom-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let jsonl = folder.appendingPathComponent("a.jsonl")
        try Data(CSVReader.byteOrderMark + Array("{\"a\":1}\n".utf8)).write(to: jsonl)
        var lines: [String] = []
        try LineReader(url: jsonl).forEachLine { line in
            if case .text(_, let bytes) = line { lines.append(String(decoding: bytes, as: UTF8.self)) }
        }
        #expect(lines == ["{\"a\":1}"])
        // A file that is only a BOM, or shorter than one, reads as empty / as itself.
        try Data(CSVReader.byteOrderMark).write(to: jsonl)
        lines = []
        try LineReader(url: jsonl).forEachLine { line in
            if case .text(_, let bytes) = line { lines.append(String(decoding: bytes, as: UTF8.self)) }
        }
        #expect(lines.isEmpty)
        try Data("x".utf8).write(to: jsonl)
        lines = []
        try LineReader(url: jsonl, chunkSize: 1).forEachLine { line in
            if case .text(_, let bytes) = line { lines.append(String(decoding: bytes, as: UTF8.self)) }
        }
        #expect(lines == ["x"])
    }

    /// Records of a CSV text as `line: fields` or `line! message`.
    func csv(_ text: [UInt8], maxRecoveries: Int = 16) throws -> [String] {
        let url = TestScratch.root.appendingPathComponent("iapguard-csv-\(UUID().uuidString).csv")
        try Data(text).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        var out: [String] = []
        try CSVReader(url: url, maxRecoveries: maxRecoveries).forEachRecord { result in
            switch result {
            case .success(let record): out.append("\(record.line): \(record.fields.joined(separator: "|"))")
            case .failure(let error): out.append("\(error.line)! \(error.message)")
            }
        }
        return out
    }

    @Test func anUnterminatedQuoteIsReportedAndTheLinesAfterItAreReadAgain() throws {
        #expect(
            try csv(Array("a,b\n1,\"x\n2,y\n3,\"z\"\"q\"\n".utf8)) == [
                "1: a|b", "2! unterminated quoted field 2: its quote is never closed (reading on from line 3)",
                "3: 2|y", "4: 3|z\"q",
            ])
        // CRLF and CR-only line ends resume on the right line too.
        #expect(
            try csv(Array("a,b\r\n\"1,x\r\n2,y\r\n".utf8)) == [
                "1: a|b", "2! unterminated quoted field 1: its quote is never closed (reading on from line 3)",
                "3: 2|y",
            ])
        #expect(
            try csv(Array("a,b\r\"1,x\r2,y\r".utf8)) == [
                "1: a|b", "2! unterminated quoted field 1: its quote is never closed (reading on from line 3)",
                "3: 2|y",
            ])
        // A stray quote on the last line: nothing to read on from.
        #expect(try csv(Array("a\n\"".utf8)) == ["1: a", "2! unterminated quoted field 1: its quote is never closed"])
    }

    /// Two stray quotes, on lines 2 and 4, make one bad record of lines 2–4 in RFC 4180 terms; the good row on
    /// line 3 between them is read again instead of being lost with them.
    @Test func aRowBetweenTwoStrayQuotesIsNotSwallowed() throws {
        #expect(
            try csv(Array("a,b\n1,\"x\n2,y\n3,\"z\n4,w\n".utf8)) == [
                "1: a|b",
                "2! text after a closing quote in field 2 (a quoted field runs over a line end; reading on from line 3)",
                "3: 2|y", "4! unterminated quoted field 2: its quote is never closed (reading on from line 5)",
                "5: 4|w",
            ])
        // A good record whose quoted field holds line breaks stays one record.
        #expect(try csv(Array("a,b\n1,\"x\n2,y\"\n3,z\n".utf8)) == ["1: a|b", "2: 1|x\n2,y", "4: 3|z"])
        // Out of recoveries, the bad record spans its lines and the rest of the file is still read.
        #expect(
            try csv(Array("a,b\n1,\"x\n2,y\n3,\"z\n4,w\n".utf8), maxRecoveries: 0) == [
                "1: a|b", "2! text after a closing quote in field 2", "5: 4|w",
            ])
    }

    @Test func recoveriesAreBoundedPerFile() throws {
        let text = Array("a\n\"1\n2\n".utf8)
        #expect(
            try csv(text, maxRecoveries: 0) == ["1: a", "2! unterminated quoted field 1: its quote is never closed"])
        #expect(try csv(text, maxRecoveries: 1).last == "3: 2")
    }

    @Test func nulBytesAndInvalidUTF8InACSVFieldFailOnlyThatRecord() throws {
        #expect(
            try csv([0x61, 0x00, 0x0A, 0x62, 0xFF, 0x0A, 0x63, 0x0A]) == [
                "1! NUL byte in field 1", "2! invalid UTF-8 in field 1", "3: c",
            ])
    }

    @Test func fxRatesMustBeFinitePositiveNumbersForAThreeLetterCurrency() throws {
        let url = TestScratch.root.appendingPathComponent("fx-\(UUID().uuidString).csv")
        defer { try? FileManager.default.removeItem(at: url) }
        for bad in ["inf", "nan", "-1", "0", "1e999"] {
            try Data("date,currency,per_eur\n2026-01-01,USD,\(bad)\n".utf8).write(to: url)
            #expect(throws: SourceError.self, "\(bad)") { try FXRateFile.load(url, source: "t") }
        }
        for currency in ["", "US", "USDX", "U$D"] {
            try Data("date,currency,per_eur\n2026-01-01,\(currency),1.1\n".utf8).write(to: url)
            #expect(throws: SourceError.self, "\(currency)") { try FXRateFile.load(url, source: "t") }
        }
        try Data("date,currency,per_eur\n2026-01-01,usd,1.1\n".utf8).write(to: url)
        #expect(try FXRateFile.load(url, source: "t").map(\.currency) == ["USD"])
    }
}
