import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// How much of a file the kernel's page cache holds, and reading a file into it.
///
/// At 10M the store is about as large as this machine's memory, and a rule query runs several times slower
/// on pages that must come from disk (IAP-001: 28.5 s uncached, 3.9 s cached). The rules and incremental
/// stages print the store's residency before they time anything, so two runs can be told apart by it, and
/// `--warm-store` reads the store once first so that every run starts from the same state.
enum PageCache {
    /// Bytes of the file at `path` that are in the page cache, and its size; nil where it cannot be told.
    ///
    /// Maps the file without touching it and asks `mincore(2)`: the mapping adds nothing to the resident
    /// set, and the file's pages are not read.
    static func residency(of path: String) -> (cached: Int, size: Int)? {
        #if os(Linux)
            let descriptor = open(path, O_RDONLY)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            var info = stat()
            guard fstat(descriptor, &info) == 0, info.st_size > 0 else { return nil }
            let size = Int(info.st_size)
            let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
            guard let mapping = mmap(nil, size, PROT_READ, MAP_SHARED, descriptor, 0), mapping != MAP_FAILED
            else { return nil }
            defer { munmap(mapping, size) }
            var pages = [UInt8](repeating: 0, count: (size + pageSize - 1) / pageSize)
            guard mincore(mapping, size, &pages) == 0 else { return nil }
            let resident = pages.reduce(0) { $0 + Int($1 & 1) }
            return (min(resident * pageSize, size), size)
        #else
            return nil
        #endif
    }

    /// One line for a stage's output: how much of the file is cached.
    static func describe(_ path: String) -> String {
        guard let (cached, size) = residency(of: path) else { return "page cache: not known" }
        return String(
            format: "%.1f of %.1f GB in the page cache (%.0f %%)", Double(cached) / 1e9, Double(size) / 1e9,
            100 * Double(cached) / Double(max(size, 1)))
    }

    /// Reads the whole file once (8 MiB at a time), so that its pages are in the page cache; returns the
    /// bytes read. Each chunk is dropped before the next is read: the process's memory does not grow with
    /// the file.
    static func warm(_ path: String) throws -> Int {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw BenchError("cannot open \(path) to read it into the page cache")
        }
        defer { try? handle.close() }
        var total = 0
        while let chunk = try handle.read(upToCount: 8 << 20), !chunk.isEmpty {
            total += chunk.count
        }
        return total
    }

    /// Prints the residency of `path` before the timed part of a stage (`before`) and, with `warm`, reads
    /// the file first and prints the residency again.
    static func report(_ stage: String, _ path: String, before: String, warm: Bool) throws {
        Measure.line(stage, "store before \(before)", describe(path))
        guard warm else { return }
        let (bytes, seconds) = try Measure.time { try Self.warm(path) }
        Measure.line(
            stage, "--warm-store: the store read once",
            String(
                format: "%.1f GB in %.1f s (%.0f MB/s); ", Double(bytes) / 1e9, seconds,
                Double(bytes) / 1e6 / max(seconds, 1e-9))
                + describe(path))
    }
}
