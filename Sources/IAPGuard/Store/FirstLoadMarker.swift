import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file `<store>.first-load` that exists, durably, for as long as a SQLite store's first load writes
/// without a journal (see ``SQLiteStore/beginBulkLoad()``).
///
/// Such a load is not crash-safe page by page: a process killed during it can leave the file inconsistent.
/// It is only ever done on a store that holds nothing but the load itself, so the marker is enough to make
/// it safe: a run that finds the marker (under the run lock) deletes the store and loads again from the
/// inputs, which still hold everything; a reader that finds it refuses the store with a clear message.
struct FirstLoadMarker {
    /// The store file the marker belongs to.
    let storePath: String

    var path: String { storePath + ".first-load" }

    var exists: Bool { FileManager.default.fileExists(atPath: path) }

    /// Writes the marker and makes it durable (file and folder synced) before the unjournaled writes begin.
    func create() throws {
        let text = """
            iapguard: a first load into \(storePath) is writing without a journal, or was killed or failed while it did.
            The next `iapguard run` deletes this store and loads it again from the inputs.

            """
        guard FileManager.default.createFile(atPath: path, contents: Data(text.utf8)) else {
            throw StoreError(message: "cannot create \(path)")
        }
        try Self.sync(path)
        Self.syncFolder(of: path)
    }

    /// Syncs the store file, then removes the marker durably: the load's pages are on disk before the
    /// marker stops saying they might not be.
    func remove() throws {
        try Self.sync(storePath)
        try FileManager.default.removeItem(atPath: path)
        Self.syncFolder(of: path)
    }

    /// When the marker exists, deletes the store with its WAL and shared-memory files, then the marker.
    /// Returns whether it did. Only a run holding the store's run lock may call this.
    func discardInterruptedLoad() throws -> Bool {
        guard exists else { return false }
        for suffix in ["", "-wal", "-shm", "-journal"] where FileManager.default.fileExists(atPath: storePath + suffix)
        {
            try FileManager.default.removeItem(atPath: storePath + suffix)
        }
        try FileManager.default.removeItem(atPath: path)
        Self.syncFolder(of: path)
        return true
    }

    /// Syncs the folder holding `path`, so that the marker's creation or removal is durable. Best effort:
    /// some file systems refuse `fsync` on a folder, and a run must not fail for that.
    private static func syncFolder(of path: String) {
        try? sync(URL(fileURLWithPath: path).deletingLastPathComponent().path)
    }

    /// `fsync` on a file or folder.
    private static func sync(_ path: String) throws {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw StoreError(message: "cannot open \(path) to sync it: errno \(errno)") }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else { throw StoreError(message: "cannot sync \(path): errno \(errno)") }
    }
}
