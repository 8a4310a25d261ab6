import Foundation
import Testing

@testable import IAPGuard

#if canImport(Glibc)
    import Glibc
#endif

@Suite(.serialized) struct RunLockTests {
    static func temporaryLockPath() -> String {
        TestScratch.root.appendingPathComponent("iapguard-lock-\(UUID().uuidString)/store.lock")
            .path
    }

    @Test func secondLockFailsAtOnceNamingHolderPidAndStartTime() throws {
        let path = Self.temporaryLockPath()
        let first = try RunLock(path: path)
        let start = Date()
        #expect(throws: RunLock.Held.self) { _ = try RunLock(path: path) }
        #expect(Date().timeIntervalSince(start) < 1)
        do {
            _ = try RunLock(path: path)
        } catch let held as RunLock.Held {
            #expect(held.holder.hasPrefix("pid \(getpid()) started 20"))
            #expect(held.description.contains("pid \(getpid())"))
            #expect(held.description.contains(path))
        }
        withExtendedLifetime(first) {}
    }

    /// A lock that cannot be created (the store's folder is not writable, or not a folder) is an I/O
    /// problem of the store (exit 74), not bad input.
    @Test func aLockThatCannotBeCreatedIsAStoreIOError() throws {
        let file = TestScratch.root.appendingPathComponent("iapguard-lock-file-\(UUID().uuidString)")
        try Data("a file, not a folder".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let error = try #require(throws: (any Error).self) { try RunLock(path: file.path + "/store.lock") }
        #expect(RunExitCode(error: error) == .ioError)
        #expect("\(error)".contains("the store's folder must be writable"))
    }

    @Test func releasedLockCanBeTakenAgain() throws {
        let path = Self.temporaryLockPath()
        do { _ = try RunLock(path: path) }
        let again = try RunLock(path: path)
        withExtendedLifetime(again) {}
    }

    @Test func concurrentRunExitsAtOnceWithTheLockedCode() throws {
        let world = try PipelineTestWorld()
        defer { world.remove() }
        var holder: RunLock? = try RunLock(path: world.storePath + ".lock")
        let start = Date()
        let outcome = try world.run()
        #expect(Date().timeIntervalSince(start) < 10)
        #expect(outcome.status == RunExitCode.lockHeld.rawValue)
        #expect(outcome.stderr.contains("holds the lock"))
        #expect(outcome.stderr.contains("pid \(getpid()) started"))
        #expect(!FileManager.default.fileExists(atPath: world.reportsDirectory.path))
        #expect(holder != nil)
        // Once the holder is gone the next run goes through.
        holder = nil
        #expect(try world.run().status == 0)
    }

    @Test func lockLeftByAKilledRunDoesNotBlock() throws {
        let world = try PipelineTestWorld()
        defer { world.remove() }
        let killed = try world.run(environment: ["IAPGUARD_CRASH_AFTER": "ingest:1"])
        #expect(killed.signaled && killed.status == SIGKILL)
        let note = try String(contentsOfFile: world.storePath + ".lock", encoding: .utf8)
        #expect(note.hasPrefix("pid "))  // the dead holder's note is still in the file
        let lock = try RunLock(path: world.storePath + ".lock")
        withExtendedLifetime(lock) {}
    }
}
