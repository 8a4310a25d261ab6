import Foundation
import Testing

@testable import IAPGuard

/// `LineReader` finds line breaks with `memchr`; these pin that it reports exactly what its contract says
/// (written out below independently as the reference): the same lines, numbers, oversize reports, CR and
/// BOM handling, for any chunk size and line-length limit.
struct LineReaderTests {
    /// What a reader reports, as comparable text.
    static func lines(of reader: LineReader) throws -> [String] {
        var out: [String] = []
        try reader.forEachLine { line in
            switch line {
            case .text(let number, let bytes): out.append("\(number): \(Array(bytes))")
            case .oversize(let number, let length, let head): out.append("\(number)! \(length) \(head)")
            }
        }
        return out
    }

    /// The reader's contract, written independently with `split`: chunks of `chunkSize`; a BOM dropped at
    /// the start; complete lines reported with a trailing CR removed; an unterminated remainder longer than
    /// `maxLineLength` after a chunk is dropped and reported as oversize (with its full length and first 256
    /// bytes) when its line ends.
    static func referenceLines(of data: [UInt8], maxLineLength: Int, chunkSize: Int) -> [String] {
        var out: [String] = []
        var pending: [UInt8] = []
        var number = 1
        var oversize: (length: Int, head: [UInt8])?
        var position = 0
        var bomChecked = false
        repeat {
            let chunk = data[position..<min(position + chunkSize, data.count)]
            position += chunk.count
            pending += chunk
            if !bomChecked, pending.count >= 3 || chunk.isEmpty {
                bomChecked = true
                if pending.starts(with: CSVReader.byteOrderMark) { pending = Array(pending.dropFirst(3)) }
            }
            var parts = pending.split(separator: 10, omittingEmptySubsequences: false)
            let rest = parts.removeLast()
            for part in parts {
                if let skipped = oversize {
                    out.append("\(number)! \(skipped.length + part.count) \(skipped.head)")
                    oversize = nil
                } else {
                    out.append("\(number): \(Array(part.last == 13 ? part.dropLast() : part))")
                }
                number += 1
            }
            pending = Array(rest)
            if let skipped = oversize {
                oversize = (skipped.length + pending.count, skipped.head)
                pending = []
            } else if pending.count > maxLineLength {
                oversize = (pending.count, Array(pending.prefix(256)))
                pending = []
            }
            if chunk.isEmpty { break }
        } while true
        if let skipped = oversize {
            out.append("\(number)! \(skipped.length) \(skipped.head)")
        } else if !pending.isEmpty {
            out.append("\(number): \(Array(pending.last == 13 ? pending.dropLast() : pending[...]))")
        }
        return out
    }

    @Test(arguments: [1, 2, 3, 7, 64, 1000])
    func reportsTheLinesItsContractDescribes(chunkSize: Int) throws {
        var random = SystemRandomNumberGenerator()
        let folder = TestScratch.root.appendingPathComponent("iapguard-lines-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("lines.jsonl")
        // Bytes drawn mostly from line breaks, CRs, a BOM's bytes and letters, so every edge occurs often:
        // empty lines, CRLF, a CR split from its LF by a chunk border, a BOM at the start, long lines.
        let alphabet: [UInt8] = [10, 10, 13, 0xEF, 0xBB, 0xBF, 65, 66, 0, 0x7B]
        for round in 0..<200 {
            var data: [UInt8] = round % 3 == 0 ? CSVReader.byteOrderMark : []
            for _ in 0..<Int.random(in: 0...300, using: &random) {
                data.append(alphabet.randomElement(using: &random) ?? 65)
            }
            if round % 5 == 0 { data += Array(repeating: 66, count: Int.random(in: 1...100, using: &random)) }
            try Data(data).write(to: file)
            let maxLineLength = [4, 16, 1 << 20][round % 3]
            let expected = Self.referenceLines(of: data, maxLineLength: maxLineLength, chunkSize: chunkSize)
            let actual = try Self.lines(of: LineReader(url: file, maxLineLength: maxLineLength, chunkSize: chunkSize))
            #expect(actual == expected, "round \(round): \(data)")
        }
    }

    @Test func readingFromAnOffsetNumbersFromTheGivenLine() throws {
        let folder = TestScratch.root.appendingPathComponent("iapguard-lines-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("lines.jsonl")
        let data = Array("a\nbb\r\nccc\n\ndd".utf8)
        try Data(data).write(to: file)
        var reader = LineReader(url: file, chunkSize: 3)
        reader.startOffset = 2
        reader.firstLineNumber = 2
        #expect(
            try Self.lines(of: reader) == [
                "2: \(Array("bb".utf8))", "3: \(Array("ccc".utf8))", "4: []", "5: \(Array("dd".utf8))",
            ])
    }
}
