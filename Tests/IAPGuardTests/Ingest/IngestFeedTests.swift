import Foundation
import Testing

@testable import IAPGuard

/// Sources are read on a background thread ahead of the writer: the writer sees exactly what a one-thread
/// read gives, in order, and stopping the writer stops the reader.
@Suite struct IngestFeedTests {
    static func creditLines(_ count: Int) -> [String] {
        (0..<count).map {
            "{\"credit_id\":\"c-\($0)\",\"transaction_id\":\"\(1_000 + $0)\",\"user_id\":\"u-\($0)\","
                + "\"product_id\":\"p\",\"units\":1,\"credited_at\":1717200001000}"
        }
    }

    static func source(_ name: String, _ lines: [String]) throws -> SourceIngestor {
        let folder = TestScratch.root.appendingPathComponent("iapguard-feed-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (index, chunk) in stride(from: 0, to: lines.count, by: 40).enumerated() {
            let file = folder.appendingPathComponent("part-\(index).jsonl")
            try Data(lines[chunk..<min(chunk + 40, lines.count)].joined(separator: "\n").utf8).write(to: file)
        }
        let config = Config.Source(name: name, kind: .credits, format: .jsonl, path: folder, query: nil)
        return SourceIngestor(
            source: config, verifier: try VerifyTestWorld.verifier(), configHash: "test", batchSize: 7)
    }

    /// A folder source's subfolders (an archive of older exports) are not its files: skipped, never read.
    @Test func aFolderSourceSkipsItsSubfolders() throws {
        let ingestor = try Self.source("a", Self.creditLines(50))
        let archive = ingestor.source.path.appendingPathComponent("archive")
        try FileManager.default.createDirectory(at: archive, withIntermediateDirectories: true)
        try Data("not a credit\n".utf8).write(to: archive.appendingPathComponent("old.jsonl"))
        #expect(try ingestor.files().map(\.lastPathComponent) == ["part-0.jsonl", "part-1.jsonl"])
    }

    @Test func theFeedGivesEachSourceTheBatchesAndFileStatesOfAOneThreadRead() throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        let sources = [try Self.source("a", Self.creditLines(100)), try Self.source("b", Self.creditLines(30))]
        let feed = IngestFeed(plans: try sources.map { try $0.plan(store: store, skipUnchanged: true) })
        defer { feed.cancel() }
        for (index, ingestor) in sources.enumerated() {
            var fed: [[String]] = []
            _ = try ingestor.consume(
                feed.events(index), store: store, runID: 1, sink: { fed.append($0.credits.map(\.sourceRef)) })
            var direct: [[String]] = []
            for file in try ingestor.files() {
                try ingestor.ingestFile(file, sink: { direct.append($0.credits.map(\.sourceRef)) })
            }
            #expect(fed == direct)
            #expect(!fed.isEmpty)
            for file in try ingestor.files() {
                #expect(try store.fileState(sourceName: ingestor.source.name, path: file.path) != nil)
            }
        }
    }

    @Test func aWriterThatFailsStopsTheReaderAndTheErrorComesOut() throws {
        struct WriteFailed: Error {}
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        let ingestor = try Self.source("a", Self.creditLines(400))
        var written = 0
        #expect(throws: WriteFailed.self) {
            _ = try ingestor.ingest(
                store: store, runID: 1,
                sink: { _ in
                    written += 1
                    if written == 2 { throw WriteFailed() }
                })
        }
        #expect(written == 2)
        // No file of the source was recorded as ingested.
        for file in try ingestor.files() {
            #expect(try store.fileState(sourceName: "a", path: file.path) == nil)
        }
    }

    @Test func aSourceErrorArrivesAfterTheBatchesReadBeforeIt() throws {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        let ingestor = try Self.source("a", Self.creditLines(80))
        // A UTF-16 file after the two good ones (files are read in name order).
        let bad = ingestor.source.path.appendingPathComponent("part-9.jsonl")
        try Data([0xFF, 0xFE, 0x7B, 0x00]).write(to: bad)
        var records = 0
        #expect(throws: SourceError.self) {
            _ = try ingestor.ingest(store: store, runID: 1, sink: { records += $0.recordCount })
        }
        #expect(records == 80)
    }
}
