import Foundation
import Testing

@testable import IAPGuard

/// Input files hashed ahead of their ingest on background threads: the ingest uses a result only for the
/// same prefix and an unchanged file, and computes anything the prefetch did not finish or failed at.
@Suite struct FileStatePrefetchTests {
    /// A result that no real hash produces, to tell a used prefetch from a recomputed state.
    static func marked(_ prefixSize: Int64?, identity: FileIdentity?) -> FileStatePrefetch.Result {
        FileStatePrefetch.Result(
            state: FileState(path: "x", size: -1, contentHash: "prefetched"), prefix: nil, prefixSize: prefixSize,
            identity: identity)
    }

    @Test func aPrefetchedStateIsTheStateTheIngestComputes() throws {
        let (directory, file, ingestor, old) = try AppendedFileIngestTests.grownFile(
            old: Data("{\"a\":1}\n{\"a\":2}\n".utf8), appended: Data("{\"a\":3}\n".utf8))
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        try store.setFileState(old, sourceName: "credits", runID: 1)
        let jobs = try ingestor.prefetchJobs(store: store, skipUnchanged: true)
        #expect(jobs.count == 1)
        let prefetch = FileStatePrefetch(jobs: jobs, threads: 2)
        prefetch.waitUntilIdle()
        let hit = try #require(prefetch.take(FileStatePrefetch.key(source: "credits", path: file.path)))
        let (state, prefix) = try ingestor.fileState(of: file, prefixSize: old.size)
        #expect(hit.prefixSize == old.size)
        #expect(hit.state == state)
        #expect(hit.prefix?.hash == prefix?.hash)
        #expect(hit.prefix?.lines == 2)
        // Taken once: a second take finds nothing.
        #expect(prefetch.take(FileStatePrefetch.key(source: "credits", path: file.path)) == nil)
    }

    @Test func aFileChangedAfterItWasHashedIsHashedAgain() throws {
        let (directory, file, _, old) = try AppendedFileIngestTests.grownFile(
            old: Data("{\"a\":1}\n".utf8), appended: Data("{\"a\":2}\n".utf8))
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = FileStatePrefetch.key(source: "credits", path: file.path)
        var ingestor = AppendedFileIngestTests.ingestor(file)
        let identity = FileIdentity.of(path: file.path)

        // Unchanged file, same prefix: the prefetched result is used.
        ingestor.prefetch = FileStatePrefetch(
            jobs: [.init(key: key, size: 1, work: { Self.marked(old.size, identity: identity) })], threads: 1)
        ingestor.prefetch?.waitUntilIdle()
        #expect(
            try ingestor.prefetchedOrComputedState(of: file, prefixSize: old.size).state.contentHash == "prefetched")

        // Hashed for another prefix: computed again.
        ingestor.prefetch = FileStatePrefetch(
            jobs: [.init(key: key, size: 1, work: { Self.marked(nil, identity: identity) })], threads: 1)
        ingestor.prefetch?.waitUntilIdle()
        #expect(
            try ingestor.prefetchedOrComputedState(of: file, prefixSize: old.size).state.contentHash != "prefetched")

        // The file grew after it was hashed: computed again, and the state covers the new bytes.
        ingestor.prefetch = FileStatePrefetch(
            jobs: [.init(key: key, size: 1, work: { Self.marked(old.size, identity: identity) })], threads: 1)
        ingestor.prefetch?.waitUntilIdle()
        let handle = try FileHandle(forWritingTo: file)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data("{\"a\":3}\n".utf8))
        try handle.close()
        let state = try ingestor.prefetchedOrComputedState(of: file, prefixSize: old.size).state
        #expect(state.contentHash != "prefetched")
        #expect(state.size == old.size + 16)
    }

    @Test func aJobNotStartedIsLeftToTheCallerAndAFailedOneToo() throws {
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let prefetch = FileStatePrefetch(
            jobs: [
                .init(
                    key: "big", size: 2,
                    work: {
                        started.signal()
                        gate.wait()
                        return Self.marked(nil, identity: nil)
                    }),
                .init(key: "small", size: 1, work: { Self.marked(nil, identity: nil) }),
                .init(key: "failing", size: 0, work: { throw RecordError("unreadable") }),
            ], threads: 1)
        // One thread, busy with the largest file: the queued one is handed back at once, not waited for.
        started.wait()
        #expect(prefetch.take("small") == nil)
        gate.signal()
        #expect(prefetch.take("big") != nil)
        prefetch.waitUntilIdle()
        #expect(prefetch.take("failing") == nil)
        #expect(prefetch.take("never planned") == nil)
    }
}
