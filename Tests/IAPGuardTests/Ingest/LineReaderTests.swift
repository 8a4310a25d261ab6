import Foundation
import Testing

@testable import IAPGuard

/// `LineReader` finds line breaks with `memchr`; these pin that it reports exactly what the byte-by-byte
/// reader it replaced reported (kept below as the reference): the same lines, numbers, oversize reports,
/// CR and BOM handling, for any chunk size and line-length limit.
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

    /// The byte-by-byte loop `LineReader` used before (same chunking and oversize rules).
    static func referenceLines(of data: [UInt8], maxLineLength: Int, chunkSize: Int, startOffset: Int = 0)
        -> [String]
    {
        var out: [String] = []
        var buffer: [UInt8] = []
        var lineNumber = 1
        var skipping = false
        var skippedLength = 0
        var skippedHead: [UInt8] = []
        var atFileStart = startOffset == 0
        var position = startOffset
        func emit(_ slice: ArraySlice<UInt8>) {
            var line = slice
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            out.append("\(lineNumber): \(Array(line))")
        }
        while true {
            let chunk = data[position..<min(position + chunkSize, data.count)]
            position += chunk.count
            let atEnd = chunk.isEmpty
            buffer.append(contentsOf: chunk)
            if atFileStart, buffer.count >= 3 || atEnd {
                atFileStart = false
                if buffer.starts(with: CSVReader.byteOrderMark) { buffer.removeFirst(3) }
            }
            var start = buffer.startIndex
            var index = start
            while index < buffer.endIndex {
                if buffer[index] == UInt8(ascii: "\n") {
                    if skipping {
                        skippedLength += index - start
                        out.append("\(lineNumber)! \(skippedLength) \(skippedHead)")
                        skipping = false
                        skippedLength = 0
                        skippedHead = []
                    } else {
                        emit(buffer[start..<index])
                    }
                    lineNumber += 1
                    start = index + 1
                }
                index += 1
            }
            buffer.removeSubrange(buffer.startIndex..<start)
            if skipping {
                skippedLength += buffer.count
                buffer.removeAll(keepingCapacity: true)
            } else if buffer.count > maxLineLength {
                skipping = true
                skippedLength = buffer.count
                skippedHead = Array(buffer.prefix(256))
                buffer.removeAll(keepingCapacity: true)
            }
            if atEnd { break }
        }
        if skipping {
            out.append("\(lineNumber)! \(skippedLength) \(skippedHead)")
        } else if !buffer.isEmpty {
            emit(buffer[...])
        }
        return out
    }

    @Test(arguments: [1, 2, 3, 7, 64, 1000])
    func reportsTheSameLinesAsTheByteByByteReader(chunkSize: Int) throws {
        var random = SystemRandomNumberGenerator()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("iapguard-lines-\(UUID())")
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
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("iapguard-lines-\(UUID())")
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
