#if canImport(Glibc)
    import Glibc
#endif

/// Hands the memory the C allocator keeps after a stage back to the system (glibc's `malloc_trim`).
///
/// glibc keeps freed memory in the arena of the thread that allocated it. Ingest parses on worker threads,
/// so the memory its batches used stays in their arenas, and the rule stage, which allocates on the run's
/// thread, cannot reuse it: the process's resident size was the ingest's plus the rules' and the report's.
/// Trimming between the stages returns those free pages, so the peak is the largest stage's, not their
/// sum. Elsewhere (or if the symbol is missing) this does nothing.
enum FreedMemory {
    #if canImport(Glibc)
        private typealias Trim = @convention(c) (Int) -> Int32
        private static let trim: Trim? = dlsym(dlopen(nil, RTLD_NOW), "malloc_trim").map {
            unsafeBitCast($0, to: Trim.self)
        }
    #endif

    /// Returns free heap pages of every arena to the system.
    static func release() {
        #if canImport(Glibc)
            _ = trim?(0)
        #endif
    }
}
