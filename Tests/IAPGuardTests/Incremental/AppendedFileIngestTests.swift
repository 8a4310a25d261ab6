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

    @Test func thePrefixStateOfAGrownFileMatchesTheOldFileState() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("iapguard-append-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("credits.jsonl")
        try Data("{\"a\":1}\n{\"a\":2}\n".utf8).write(to: file)
        let ingestor = Self.ingestor(file)
        let old = try ingestor.fileState(of: file)
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("{\"a\":3}\n".utf8))
        try handle.close()
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
}
