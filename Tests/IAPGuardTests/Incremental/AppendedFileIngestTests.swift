import Foundation
import Testing

@testable import IAPGuard

/// A JSON Lines file that only grew is read from its old end; any other change re-reads it whole.
@Suite struct AppendedFileIngestTests {
    static func ingestor(_ path: URL) -> SourceIngestor {
        SourceIngestor(
            source: Config.Source(name: "credits", kind: .credits, format: .jsonl, path: path, query: nil),
            verifier: UncheckedVerifier(), configHash: "c")
    }

    /// `credits.jsonl` in a fresh folder written with `old`, its state taken, then `appended` added to it.
    static func grownFile(old: Data, appended: Data) throws -> (
        directory: URL, file: URL, ingestor: SourceIngestor, old: FileState
    ) {
        let directory = TestScratch.root.appendingPathComponent("iapguard-append-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("credits.jsonl")
        try old.write(to: file)
        let ingestor = Self.ingestor(file)
        let state = try ingestor.fileState(of: file)
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: appended)
        try handle.close()
        return (directory, file, ingestor, state)
    }

    @Test func thePrefixStateOfAGrownFileMatchesTheOldFileState() throws {
        let (directory, file, ingestor, old) = try Self.grownFile(
            old: Data("{\"a\":1}\n{\"a\":2}\n".utf8), appended: Data("{\"a\":3}\n".utf8))
        defer { try? FileManager.default.removeItem(at: directory) }
        let (state, prefix) = try ingestor.fileState(of: file, prefixSize: old.size)
        let head = try #require(prefix)
        #expect(head.hash + ":c" == old.contentHash)
        #expect(head.lines == 2)
        #expect(head.endsAtLineBreak)
        #expect(state.size == old.size + 8)
        #expect(state != old)
        var lines: [Int] = []
        var reader = LineReader(url: file)
        reader.startOffset = UInt64(old.size)
        reader.firstLineNumber = head.lines + 1
        try reader.forEachLine { line in
            if case .text(let number, let bytes) = line {
                lines.append(number)
                #expect(String(decoding: bytes, as: UTF8.self) == "{\"a\":3}")
            }
        }
        #expect(lines == [3])
    }

    /// Quotes decide only for CSV: a JSON Lines prefix with an odd number of `"` (one escaped) is still a
    /// prefix that ends between records.
    @Test func aJSONLinesPrefixWithAnEscapedQuoteStillEndsBetweenRecords() throws {
        let (directory, file, ingestor, old) = try Self.grownFile(
            old: Data(#"{"note":"say \"hi"}"#.utf8 + [0x0A]), appended: Data("{\"a\":3}\n".utf8))
        defer { try? FileManager.default.removeItem(at: directory) }
        let head = try #require(try ingestor.fileState(of: file, prefixSize: old.size).prefix)
        #expect(head.lines == 1)
        #expect(head.quotes % 2 == 0)
    }

    @Test(arguments: [0, 1, 7, 8, 9, 63, 64, 65, 1_000])
    func byteCountsMatchAPlainLoop(length: Int) {
        var random = SystemRandomNumberGenerator()
        // Bytes around the ones counted (0x0A, 0x22) and with the high bit set, where a word trick could carry.
        let alphabet: [UInt8] = [0x0A, 0x22, 0x09, 0x0B, 0x21, 0x23, 0x8A, 0xA2, 0x00, 0xFF, 0x7F, 0x80]
        let bytes = (0..<length).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] }
        bytes.withUnsafeBytes { raw in
            for byte: UInt8 in [0x0A, 0x22, 0x00, 0xFF, 0x80] {
                #expect(ByteCounter.count(byte, in: raw) == bytes.filter { $0 == byte }.count)
            }
        }
    }
}
