import Foundation
import Testing

@testable import IAPGuard

#if canImport(Glibc)
    import Glibc
#endif

/// The quick check: a file whose device, inode, size and times are as they were when its content was last
/// hashed is skipped without being read; any other file is hashed as before.
@Suite struct FileIdentityTests {
    /// A folder with one credits file, a store, and an ingestor whose clock runs 10 s ahead so the files
    /// just written are not racy.
    struct World {
        let directory: URL
        let file: URL
        let store: SQLiteStore

        init() throws {
            directory = TestScratch.root.appendingPathComponent("iapguard-identity-\(UUID())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            file = directory.appendingPathComponent("credits.jsonl")
            try Data("{\"a\":1}\n{\"a\":2}\n".utf8).write(to: file)
            store = try SQLiteStore(path: ":memory:")
            try store.migrate()
        }

        func ingestor(configHash: String = "c", clockAhead: Int64 = 10_000_000_000) -> SourceIngestor {
            var ingestor = SourceIngestor(
                source: Config.Source(name: "credits", kind: .credits, format: .jsonl, path: file, query: nil),
                verifier: UncheckedVerifier(), configHash: configHash)
            ingestor.clock = { FileIdentity.nowNanoseconds() + clockAhead }
            return ingestor
        }

        /// Ingests the folder; returns how many records reached the sink and how many files were skipped.
        func ingest(_ ingestor: SourceIngestor, runID: Int64) throws -> (records: Int, skipped: Int) {
            var records = 0
            let counts = try ingestor.ingest(
                store: store, runID: runID, sink: { records += $0.recordCount })
            return (records, counts.filesSkipped)
        }

        func state() throws -> FileState? {
            try store.fileState(sourceName: "credits", path: file.path)
        }

        /// Sets the file's modification time (nanoseconds since the epoch).
        func setModified(_ nanoseconds: Int64) {
            var times = [
                timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000)),
                timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000)),
            ]
            _ = utimensat(AT_FDCWD, file.path, &times, 0)
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    @Test func anUnchangedFileIsSkippedWithoutBeingRead() throws {
        let world = try World()
        defer { world.remove() }
        let ingestor = world.ingestor()
        #expect(try world.ingest(ingestor, runID: 1).records == 2)
        let first = try #require(try world.state())
        let key = try #require(first.statKey)
        #expect(key == FileIdentity.of(path: world.file.path)?.key)
        // A stored hash that the bytes do not have: only a check that does not hash the file still skips it.
        try world.store.setFileState(
            FileState(path: first.path, size: first.size, contentHash: "not-the-hash:c", statKey: key),
            sourceName: "credits", runID: 1)
        let second = try world.ingest(ingestor, runID: 2)
        #expect(second.records == 0)
        #expect(second.skipped == 1)
    }

    @Test func aFileRewrittenInPlaceWithItsOldSizeAndTimeIsReadAgain() throws {
        let world = try World()
        defer { world.remove() }
        let ingestor = world.ingestor()
        #expect(try world.ingest(ingestor, runID: 1).records == 2)
        let before = try #require(FileIdentity.of(path: world.file.path))
        // Same length, other bytes, written into the same inode; the modification time put back as `cp -p`
        // or `rsync -t` would. Only the status-change time tells.
        let handle = try FileHandle(forWritingTo: world.file)
        try handle.write(contentsOf: Data("{\"a\":7}\n{\"a\":8}\n".utf8))
        try handle.close()
        world.setModified(before.modifiedNanoseconds)
        let after = try #require(FileIdentity.of(path: world.file.path))
        #expect(after.inode == before.inode)
        #expect(after.size == before.size)
        #expect(after.modifiedNanoseconds == before.modifiedNanoseconds)
        #expect(try world.ingest(ingestor, runID: 2).records == 2)
    }

    @Test func aTouchedFileWithTheSameBytesIsSkippedAndItsNewIdentityKept() throws {
        let world = try World()
        defer { world.remove() }
        let ingestor = world.ingestor()
        #expect(try world.ingest(ingestor, runID: 1).records == 2)
        let old = try #require(try world.state()?.statKey)
        world.setModified(FileIdentity.nowNanoseconds() - 3_600_000_000_000)
        let second = try world.ingest(ingestor, runID: 2)
        #expect(second.records == 0)
        #expect(second.skipped == 1)
        let new = try #require(try world.state()?.statKey)
        #expect(new != old)
        #expect(new == FileIdentity.of(path: world.file.path)?.key)
    }

    @Test func aFileChangedWithinTheRacyWindowKeepsNoIdentity() throws {
        let world = try World()
        defer { world.remove() }
        // The real clock: the file was written a moment ago.
        #expect(try world.ingest(world.ingestor(clockAhead: 0), runID: 1).records == 2)
        let state = try #require(try world.state())
        #expect(state.statKey == nil)
        #expect(state.size == 16)
    }

    @Test func aConfigChangeReadsAnUnchangedFileAgain() throws {
        let world = try World()
        defer { world.remove() }
        #expect(try world.ingest(world.ingestor(configHash: "c"), runID: 1).records == 2)
        #expect(try world.state()?.statKey != nil)
        #expect(try world.ingest(world.ingestor(configHash: "d"), runID: 2).records == 2)
    }

    @Test func aGrownFileIsReadFromItsOldEndAfterTheQuickCheckFails() throws {
        let world = try World()
        defer { world.remove() }
        let ingestor = world.ingestor()
        #expect(try world.ingest(ingestor, runID: 1).records == 2)
        let handle = try FileHandle(forWritingTo: world.file)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("{\"a\":3}\n".utf8))
        try handle.close()
        #expect(try world.ingest(ingestor, runID: 2).records == 1)
        #expect(try world.state()?.size == 24)
    }
}
