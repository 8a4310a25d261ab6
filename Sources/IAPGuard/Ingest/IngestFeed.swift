import Foundation

/// Reads sources ahead of the writer: one background thread reads, parses and verifies the planned sources
/// in order (the parsing itself on every core, see ``SourceIngestor``), each into its own bounded queue,
/// while the caller writes what the queues hold. When a source's reading is done the thread goes on to the
/// next one, so the writer never waits for a source's first batch to be parsed.
///
/// The queues hold at most ``capacity`` batches each: memory stays bounded whatever the input size. The
/// caller must ``cancel()`` the feed when it stops writing early (an error, a signal); the thread then
/// stops at its next batch and the call waits for it.
public final class IngestFeed: @unchecked Sendable {
    /// One source to read: its ingestor and its files, each with the state recorded when last ingested.
    public struct Plan: @unchecked Sendable {
        let ingestor: SourceIngestor
        let files: [(URL, FileState?)]
    }

    /// What reading a source yields, in order.
    public enum Event: Sendable {
        /// A batch of records to write.
        case batch(IngestBatch)
        /// A file skipped as unchanged; `newIdentity` is its state to record when only its identity moved.
        case skipped(newIdentity: FileState?)
        /// A file read: record `state` (after its batches were written) and report `delivery`. `whole` is
        /// true when the file was read from its start, false when only its appended lines were.
        case read(file: URL, state: FileState, delivery: SourceHealth.Delivery, whole: Bool)
    }

    /// The events of one source, taken by the writer in order.
    public struct Events: Sendable {
        fileprivate let queue: Queue

        /// The next event; nil after the source's last one. Rethrows the error that ended the source's
        /// reading, after the events read before it.
        public func next() throws -> Event? { try queue.take() }
    }

    /// The batches each queue holds at most.
    static let capacity = 2

    private let queues: [Queue]
    private let finished = DispatchGroup()

    /// Starts reading `plans` in order on a background thread.
    public init(plans: [Plan]) {
        let queues = plans.map { _ in Queue(capacity: Self.capacity) }
        self.queues = queues
        finished.enter()
        let thread = Thread { [finished] in
            for (plan, queue) in zip(plans, queues) {
                do {
                    try plan.ingestor.produce(plan.files) { try queue.put($0) }
                    queue.finish(nil)
                } catch is Cancelled {
                    break
                } catch {
                    queue.finish(error)
                }
            }
            finished.leave()
        }
        thread.name = "iapguard.ingest-feed"
        thread.start()
    }

    /// The events of the plan at `index`.
    public func events(_ index: Int) -> Events { Events(queue: queues[index]) }

    /// Stops the reading thread at its next batch and waits until it has stopped.
    public func cancel() {
        for queue in queues { queue.cancel() }
        finished.wait()
    }

    deinit {
        for queue in queues { queue.cancel() }
    }

    /// Thrown to the reading thread when the writer cancelled the feed.
    struct Cancelled: Error {}

    /// A blocking queue of at most `capacity` events, closed by the reader (with an error or not) or
    /// cancelled by the writer.
    fileprivate final class Queue: @unchecked Sendable {
        private let condition = NSCondition()
        private var items: [Event] = []
        private let capacity: Int
        private var done = false
        private var failure: (any Error)?
        private var cancelled = false

        init(capacity: Int) {
            self.capacity = capacity
        }

        /// Waits while the queue holds `capacity` batches; throws ``Cancelled`` once the writer cancelled.
        /// File events do not count towards the capacity (they are small and must not wait behind batches).
        func put(_ event: Event) throws {
            condition.lock()
            defer { condition.unlock() }
            if case .batch = event {
                while !cancelled, batchCount >= capacity { condition.wait() }
            }
            if cancelled { throw Cancelled() }
            items.append(event)
            condition.broadcast()
        }

        private var batchCount: Int {
            items.reduce(0) { count, event in
                if case .batch = event { return count + 1 }
                return count
            }
        }

        func finish(_ error: (any Error)?) {
            condition.lock()
            done = true
            failure = error
            condition.broadcast()
            condition.unlock()
        }

        func take() throws -> Event? {
            condition.lock()
            defer { condition.unlock() }
            while items.isEmpty, !done, !cancelled { condition.wait() }
            if !items.isEmpty {
                // A handful of events at most: removing the first keeps no written batch alive.
                let event = items.removeFirst()
                condition.broadcast()
                return event
            }
            if cancelled { throw Cancelled() }
            if let failure { throw failure }
            return nil
        }

        func cancel() {
            condition.lock()
            cancelled = true
            items.removeAll()
            condition.broadcast()
            condition.unlock()
        }
    }
}
