import Foundation
import Testing

@testable import IAPGuard

/// A lone CR in the header line of a LF or CRLF file is the same broken record boundary as one in a data row:
/// it once cut the header in two and quarantined every row for its field count, without naming the CR.
@Suite struct CSVHeaderLoneCRTests {
    static func records(_ text: String) throws -> [String] {
        let url = TestScratch.root.appendingPathComponent("csv-\(UUID().uuidString).csv")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data(text.utf8).write(to: url)
        var out: [String] = []
        try CSVReader(url: url).forEachRecord { result in
            switch result {
            case .success(let record): out.append("\(record.line): \(record.fields.joined(separator: "|"))")
            case .failure(let error): out.append("\(error.line)! \(error.message)\(error.isLoneCR ? " [lone CR]" : "")")
            }
        }
        return out
    }

    @Test func aLoneCRInTheHeaderOfACRLFFileIsALoneCRError() throws {
        #expect(
            try Self.records("a,b\r,c\r\n1,2,3\r\n") == [
                "1! a lone carriage return (CR) outside quotes in field 2 [lone CR]", "2: 1|2|3",
            ])
    }

    @Test func aCROnlyFileStillEndsItsLinesWithCR() throws {
        #expect(try Self.records("a,b\r1,2\r") == ["1: a|b", "2: 1|2"])
    }

    @Test func theSourceErrorNamesTheHeaderAndTheCR() throws {
        let world = try IngestTestWorld()
        try world.write(
            "orders.csv", "order_id,user_id\r,created_at\r\no-1,u-1,1767225600000\r\no-2,u-1,1767225600000\r\n")
        let summary = try world.run(
            try world.config(sources: ["{name: orders, kind: orders, format: csv, path: data/orders.csv}"]))
        #expect(
            summary.errors == [
                "source orders: orders.csv:1: the header row cannot be read: a lone carriage return (CR) outside quotes in field 2"
            ], "\(summary.errors)")
    }
}
