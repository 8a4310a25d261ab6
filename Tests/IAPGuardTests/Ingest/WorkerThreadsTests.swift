import Foundation
import Testing

@testable import IAPGuard

/// The threads ingest parses and verifies on (``WorkerThreads``) beside the calling thread.
@Suite struct WorkerThreadsTests {
    /// Indexes seen, from any thread.
    final class Seen: @unchecked Sendable {
        private let lock = NSLock()
        private var counts: [Int: Int] = [:]

        func add(_ index: Int) {
            lock.lock()
            counts[index, default: 0] += 1
            lock.unlock()
        }

        var all: [Int: Int] {
            lock.lock()
            defer { lock.unlock() }
            return counts
        }
    }

    @Test func everyIterationRunsOnceAndApplyReturnsAfterTheLast() {
        let pool = WorkerThreads(threads: 3)
        let seen = Seen()
        pool.apply(iterations: 1_000) { index in
            if index % 97 == 0 { usleep(1_000) }
            seen.add(index)
        }
        #expect(seen.all == Dictionary(uniqueKeysWithValues: (0..<1_000).map { ($0, 1) }))
    }

    @Test func aPoolThreadRunsAnIterationWhileTheCallerIsBusyWithAnother() {
        // The caller takes index 0 and waits there for index 1, which only a pool thread can run.
        let pool = WorkerThreads(threads: 1)
        let second = DispatchSemaphore(value: 0)
        let met = Seen()
        pool.apply(iterations: 2) { index in
            if index == 1 {
                second.signal()
            } else if second.wait(timeout: .now() + 10) == .success {
                met.add(index)
            }
        }
        #expect(met.all == [0: 1])
    }

    #if os(Linux)
        /// The nice value of the calling thread.
        static func niceValue() -> Int32 {
            getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0)
        }

        @Test func poolThreadsRunBelowTheCallerAndTheCallerKeepsItsPriority() {
            let pool = WorkerThreads(threads: 1)
            let caller = pthread_self()
            let callerNice = Self.niceValue()
            let second = DispatchSemaphore(value: 0)
            let seen = Seen()
            pool.apply(iterations: 2) { index in
                // Whichever thread takes index 0 waits for index 1, so both threads run one each.
                if index == 1 { second.signal() } else { _ = second.wait(timeout: .now() + 10) }
                seen.add(
                    pthread_equal(pthread_self(), caller) != 0 ? 1_000 + Int(Self.niceValue()) : Int(Self.niceValue()))
            }
            #expect(seen.all == [1_000 + Int(callerNice): 1, Int(WorkerThreads.niceness): 1])
        }
    #endif

    @Test func callersOnSeveralThreadsShareThePool() {
        let pool = WorkerThreads(threads: 1)
        let seen = Seen()
        DispatchQueue.concurrentPerform(iterations: 4) { caller in
            pool.apply(iterations: 50) { index in seen.add(caller * 1_000 + index) }
        }
        #expect(seen.all.count == 200)
        #expect(seen.all.values.allSatisfy { $0 == 1 })
    }

    @Test func withoutThreadsTheCallerRunsEveryIterationInOrder() {
        let pool = WorkerThreads(threads: 0)
        let order = OrderedIndexes()
        pool.apply(iterations: 5) { order.append($0) }
        #expect(order.values == [0, 1, 2, 3, 4])
    }

    final class OrderedIndexes: @unchecked Sendable {
        private let lock = NSLock()
        private var indexes: [Int] = []

        func append(_ index: Int) {
            lock.lock()
            indexes.append(index)
            lock.unlock()
        }

        var values: [Int] {
            lock.lock()
            defer { lock.unlock() }
            return indexes
        }
    }
}
