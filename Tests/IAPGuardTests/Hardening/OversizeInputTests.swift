import Foundation
import Testing

@testable import IAPGuard

/// Inputs too big to keep as files: a 10 MB line (over the 8 MiB limit) between two good records, in
/// every JSON Lines format and in a CSV file.
@Suite struct OversizeInputTests {
    static let formats = ["receipts", "signed", "notifications", "credits", "orders-jsonl", "orders-csv"]

    @Test(arguments: formats)
    func aTenMegabyteLineIsQuarantinedUnreadAndTheGoodRecordsAroundItAreStored(_ format: String) throws {
        let good = try MalformedCorpus.goodRecords(format)
        var bytes: [UInt8] = []
        if let header = good.header { bytes += Array((header + "\n").utf8) }
        bytes += Array((good.records[0] + "\n").utf8)
        // A 10 MB line: JSON-looking (`{"x":"aaaa…"}`) in JSON Lines, plain text in CSV.
        let body = Array(repeating: UInt8(ascii: "a"), count: 10 << 20)
        bytes += good.header == nil ? Array(#"{"x":""#.utf8) + body + Array("\"}\n".utf8) : body + [0x0A]
        bytes += Array((good.records[1] + "\n").utf8)
        let ingest = try CorpusIngest(format: format, bytes: bytes)
        defer { ingest.remove() }
        let file = "input.\(MalformedCorpus.source(format).format)"
        let line = good.header == nil ? 2 : 3
        #expect(try ingest.count(good.check) == 2)
        let quarantine = try ingest.quarantine()
        #expect(quarantine.count == 1)
        #expect(quarantine.first?.location == "\(file):\(line)")
        let reason = quarantine.first?.reason ?? ""
        #expect(reason.contains("longer than"), "\(reason)")
    }

    @Test func aTenMegabyteQuotedCSVFieldThatNeverClosesDoesNotSwallowTheRowsAfterIt() throws {
        let good = try MalformedCorpus.goodRecords("orders-csv")
        var bytes = Array("\(good.header ?? "")\n\(good.records[0])\no-bad,\"".utf8)
        bytes += Array(repeating: UInt8(ascii: "z"), count: 10 << 20)
        bytes += Array("\n\(good.records[1])\n".utf8)
        let ingest = try CorpusIngest(format: "orders-csv", bytes: bytes)
        defer { ingest.remove() }
        #expect(try ingest.count(good.check) == 2)
        let quarantine = try ingest.quarantine()
        #expect(quarantine.map(\.location) == ["input.csv:3"])
        #expect(quarantine.first?.reason.contains("unterminated quoted field 2") == true)
    }
}
