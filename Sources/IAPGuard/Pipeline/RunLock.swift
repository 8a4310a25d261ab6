import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A single-instance lock: `flock` on a file next to the store. The kernel drops the lock when the holder
/// dies (even by SIGKILL), so a stale lock file never blocks the next run.
public final class RunLock {
    public let path: String
    private let descriptor: Int32

    /// Another run holds the lock.
    public struct Held: Error, Sendable, CustomStringConvertible {
        public let path: String
        /// The holder's note: `pid <pid> started <RFC 3339 time>`.
        public let holder: String
        public var description: String { "another iapguard run holds the lock \(path) (\(holder)); try again later" }
    }

    /// Takes the lock or throws ``Held`` at once (never waits).
    public init(path: String) throws {
        self.path = path
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            // The store's folder cannot be written (read-only, full, not a folder): an I/O problem (exit 74),
            // not bad input.
            throw StoreError(
                message:
                    "cannot open the run lock \(path): \(String(cString: strerror(errno))) (the store's folder must be writable)"
            )
        }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = pread(fd, &buffer, 255, 0)
            close(fd)
            let holder = count > 0 ? String(decoding: buffer[0..<count], as: UTF8.self) : "holder unknown"
            throw Held(path: path, holder: holder.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        descriptor = fd
        let note = "pid \(getpid()) started \(TimeParser.iso8601(Clock.nowMillis()))\n"
        _ = ftruncate(fd, 0)
        _ = note.withCString { pwrite(fd, $0, strlen($0), 0) }
    }

    deinit {
        _ = ftruncate(descriptor, 0)
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
