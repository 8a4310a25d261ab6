#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// CPU time the process has used so far, all threads, user and system (`getrusage`).
enum ProcessCPUTime {
    static func seconds() -> Double {
        var usage = rusage()
        #if canImport(Glibc)
            let who = __rusage_who_t(RUSAGE_SELF.rawValue)
        #else
            let who = RUSAGE_SELF
        #endif
        guard getrusage(who, &usage) == 0 else { return 0 }
        func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
