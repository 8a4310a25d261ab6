import Dispatch
import Foundation

/// Runs a short async computation to completion from synchronous code.
///
/// swift-certificates' `Verifier.validate` is `async` although, over in-memory certificate stores, it
/// never waits on anything. ``JWSVerifier`` is synchronous (it runs on ingest's parse threads and
/// ``WorkerThreads``, and in tests that call it from Swift's cooperative pool), so the
/// work runs on a task whose executor is a thread of its own, and the caller blocks on a semaphore.
/// Because the task never needs a thread of the cooperative pool, blocking a cooperative thread here
/// cannot deadlock, even when every cooperative thread is doing the same.
enum BlockingAsyncRunner {
    /// Starts the thread the tasks run on, if not yet started. A thread starts with its creator's nice value,
    /// and the first verification may run on a parse thread (nice 10, ``WorkerThreads/lowerPriority()``): the
    /// verifier starts it when it is made instead, so that chain validations do not wait behind the parsing
    /// they unblock.
    static func startThread() {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) { _ = DispatchTaskExecutor.shared }
    }

    /// Runs `operation` and returns its value (`nil` only if the task somehow finished without one).
    static func run<T: Sendable>(_ operation: @escaping @Sendable () async -> T) -> T? {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
            Task(executorPreference: DispatchTaskExecutor.shared) {
                box.store(await operation())
                done.signal()
            }
        } else {
            Task.detached {
                box.store(await operation())
                done.signal()
            }
        }
        done.wait()
        return box.take()
    }
}

/// A task executor on a thread of its own: neither the cooperative pool nor a dispatch queue.
///
/// The callers block the threads they verify on (``SourceIngestor`` verifies on its parse threads and
/// ``WorkerThreads``); a job queued on a dispatch queue then waited for libdispatch to
/// notice the blocked pool and start another worker, about a second per wait. The validations never wait
/// on anything, so one thread running jobs in turn serves every caller at once.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
private final class DispatchTaskExecutor: TaskExecutor, @unchecked Sendable {
    static let shared = DispatchTaskExecutor()
    private let condition = NSCondition()
    /// Guarded by `condition`.
    private var jobs: [UnownedJob] = []

    private init() {
        let thread = Thread { [self] in runJobs() }
        thread.name = "iapguard.verify.chain"
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let unownedJob = UnownedJob(job)
        condition.lock()
        jobs.append(unownedJob)
        condition.signal()
        condition.unlock()
    }

    private func runJobs() {
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: executor)
        }
    }
}

/// A value handed from the task to the waiting thread.
private final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: T?

    func store(_ newValue: T) {
        lock.lock()
        value = newValue
        lock.unlock()
    }

    /// Returns the stored value (set before the semaphore is signalled).
    func take() -> T? {
        lock.lock()
        defer { lock.unlock() }
        return value
    }
}
