import Foundation

/// Threads of the process's own that run the iterations of ``apply(iterations:_:)`` beside the calling
/// thread.
///
/// `DispatchQueue.concurrentPerform` runs its iterations on libdispatch's worker threads, and on Linux
/// libdispatch starts another worker only once its monitor notices work waiting, up to about a second later:
/// a daily run's file, parsed and verified in one job, ran on one thread while the other core idled. These
/// threads are started on first use and then wait on a condition between jobs.
///
/// They run at nice 10 (Linux): below ingest's writer, which the whole run waits on, so that parsing the
/// next source ahead does not take its core. A thread started from one of them inherits that nice value, so
/// work run here should not start long-lived threads (``BlockingAsyncRunner/startThread()``).
public final class WorkerThreads: @unchecked Sendable {
    /// One thread fewer than the cores: the caller of ``apply(iterations:_:)`` is the last one.
    public static let shared = WorkerThreads(threads: ProcessInfo.processInfo.activeProcessorCount - 1)

    private let condition = NSCondition()
    /// Jobs that may have iterations left, oldest first. Guarded by `condition`.
    private var jobs: [Job] = []
    /// Guarded by `condition`.
    private var started = false
    private let threads: Int
    /// The nice value of the pool's threads.
    static let niceness: Int32 = 10

    /// A pool of `threads` threads (none: every job runs on its caller).
    public init(threads: Int) {
        self.threads = max(0, threads)
    }

    /// Calls `body` once for each index in `0..<iterations`, on the calling thread and the pool's, and
    /// returns once every call has returned. Each thread takes the next index in turn, so a slow iteration
    /// does not hold back the others.
    public func apply(iterations: Int, _ body: @escaping @Sendable (Int) -> Void) {
        guard iterations > 1, threads > 0 else {
            for index in 0..<max(0, iterations) { body(index) }
            return
        }
        let job = Job(iterations: iterations, body: body)
        condition.lock()
        if !started { start() }
        jobs.append(job)
        condition.broadcast()
        condition.unlock()
        job.run()
        job.waitUntilFinished()
        remove(job)
    }

    /// Starts the threads; the caller holds `condition`.
    private func start() {
        started = true
        for number in 0..<threads {
            let thread = Thread { [self] in serve() }
            thread.name = "iapguard.worker.\(number)"
            thread.start()
        }
    }

    /// Lowers the calling thread to the pool's nice value (Linux, where the nice value is per thread; 0 names
    /// the calling one): ingest's writer, whose pace the whole run waits on, keeps its core while parsing
    /// takes what is left. It cannot be raised again without privileges: call it only on a thread of one's own.
    public static func lowerPriority() {
        #if os(Linux)
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, niceness)
        #endif
    }

    private func serve() {
        Self.lowerPriority()
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs[0]
            condition.unlock()
            job.run()
            // Every iteration of the job is taken (by this thread or another): it leaves the queue.
            remove(job)
        }
    }

    private func remove(_ job: Job) {
        condition.lock()
        jobs.removeAll { $0 === job }
        condition.unlock()
    }

    /// One call of ``apply(iterations:_:)``: the next index to take and how many calls have returned.
    private final class Job: @unchecked Sendable {
        private let iterations: Int
        private let body: @Sendable (Int) -> Void
        private let condition = NSCondition()
        /// Guarded by `condition`.
        private var next = 0
        /// Guarded by `condition`.
        private var finished = 0

        init(iterations: Int, body: @escaping @Sendable (Int) -> Void) {
            self.iterations = iterations
            self.body = body
        }

        /// Runs iterations until none is left to take.
        func run() {
            while let index = take() {
                body(index)
                condition.lock()
                finished += 1
                if finished == iterations { condition.broadcast() }
                condition.unlock()
            }
        }

        func waitUntilFinished() {
            condition.lock()
            while finished < iterations { condition.wait() }
            condition.unlock()
        }

        private func take() -> Int? {
            condition.lock()
            defer { condition.unlock() }
            guard next < iterations else { return nil }
            next += 1
            return next - 1
        }
    }
}
