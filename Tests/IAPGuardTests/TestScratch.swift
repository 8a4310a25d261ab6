import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The folder every test writes its temporary files under: `iapguard-tests-<pid>` in the system's temporary
/// directory, one per test process.
///
/// Many test worlds are built once per process (static lets) and cannot be removed when the last test that
/// uses them ends: Swift Testing has no per-process teardown. Instead, the first use of the root removes the
/// roots of earlier test processes that are no longer running, so a developer's `/tmp` holds at most the
/// last run's files (about 150 MB), not every run's.
enum TestScratch {
    /// This process's root, created on first use after the stale roots are swept.
    static let root: URL = {
        let base = FileManager.default.temporaryDirectory
        let prefix = "iapguard-tests-"
        let own = ProcessInfo.processInfo.processIdentifier
        for name in (try? FileManager.default.contentsOfDirectory(atPath: base.path)) ?? []
        where name.hasPrefix(prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count)), pid != own, !isRunning(pid) else { continue }
            try? FileManager.default.removeItem(at: base.appendingPathComponent(name))
        }
        let root = base.appendingPathComponent(prefix + String(own), isDirectory: true)
        try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        return root
    }()

    /// Whether a process with this id exists (`kill(pid, 0)`; `EPERM` means it exists under another user).
    static func isRunning(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
    }
}
