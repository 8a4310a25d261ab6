#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What `stat(2)` says of a file: device, inode, size, and modification and status-change times in
/// nanoseconds — the quick check that lets ingest skip a file without reading it (as git and rsync do).
///
/// The status-change time cannot be set by tools (`touch -d`, `cp -p` and `rsync -t` set only the
/// modification time), so a file rewritten in place with the same size and a restored modification time
/// still differs. A file modified within `racyWindowNanoseconds` of the check is *racy*: a write in the
/// same filesystem clock tick could leave every field unchanged, so its identity is not recorded and the
/// next run hashes it again (git's "racily clean" rule).
public struct FileIdentity: Sendable, Hashable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    public var modifiedNanoseconds: Int64
    public var changedNanoseconds: Int64

    /// Two seconds: coarser than any filesystem's timestamp granularity in use (ext4 and XFS tick with the
    /// kernel's coarse clock, a few milliseconds; FAT has two seconds).
    public static let racyWindowNanoseconds: Int64 = 2_000_000_000

    public init(device: UInt64, inode: UInt64, size: Int64, modifiedNanoseconds: Int64, changedNanoseconds: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modifiedNanoseconds = modifiedNanoseconds
        self.changedNanoseconds = changedNanoseconds
    }

    /// The identity of the file at `path`, or nil when it cannot be read (the caller then hashes the file).
    public static func of(path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
            let modified = info.st_mtimespec
            let changed = info.st_ctimespec
        #else
            let modified = info.st_mtim
            let changed = info.st_ctim
        #endif
        return FileIdentity(
            device: UInt64(truncatingIfNeeded: info.st_dev), inode: UInt64(truncatingIfNeeded: info.st_ino),
            size: Int64(info.st_size),
            modifiedNanoseconds: Int64(modified.tv_sec) * 1_000_000_000 + Int64(modified.tv_nsec),
            changedNanoseconds: Int64(changed.tv_sec) * 1_000_000_000 + Int64(changed.tv_nsec))
    }

    /// The current wall-clock time in nanoseconds since the epoch (the filesystem's clock).
    public static func nowNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    /// Whether the file was modified (or its status changed) so recently before `now` that a further write
    /// in the same clock tick could go unseen.
    public func isRacy(now: Int64) -> Bool {
        max(modifiedNanoseconds, changedNanoseconds) >= now - Self.racyWindowNanoseconds
    }

    /// The text stored in `file_state.stat_key`.
    public var key: String {
        "\(device):\(inode):\(size):\(modifiedNanoseconds):\(changedNanoseconds)"
    }
}
