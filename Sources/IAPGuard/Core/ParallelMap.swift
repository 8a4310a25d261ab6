import Foundation

/// Maps an array on all cores, keeping the order of the input.
public enum ParallelMap {
    /// Returns `transform` applied to every element, in order. The work is split into a few chunks per core,
    /// so one slow chunk does not leave the other cores idle; a single element or a single core runs inline.
    /// The chunks run on the calling thread and ``WorkerThreads/shared``.
    public static func map<Element: Sendable, Result: Sendable>(
        _ elements: [Element], _ transform: @escaping @Sendable (Element) -> Result
    ) -> [Result] {
        let cores = max(1, ProcessInfo.processInfo.activeProcessorCount)
        guard elements.count > 1, cores > 1 else { return elements.map(transform) }
        let chunkCount = min(elements.count, cores * 4)
        let chunkSize = (elements.count + chunkCount - 1) / chunkCount
        let results = Chunks<Result>(count: chunkCount)
        WorkerThreads.shared.apply(iterations: chunkCount) { chunk in
            let start = chunk * chunkSize
            let end = min(start + chunkSize, elements.count)
            guard start < end else { return }
            results.set(chunk, elements[start..<end].map(transform))
        }
        return results.joined()
    }

    /// Each chunk's results, written once by the worker that computed them.
    private final class Chunks<Result>: @unchecked Sendable {
        private let lock = NSLock()
        private var chunks: [[Result]]

        init(count: Int) { chunks = Array(repeating: [], count: count) }

        func set(_ index: Int, _ values: [Result]) {
            lock.lock()
            chunks[index] = values
            lock.unlock()
        }

        func joined() -> [Result] {
            lock.lock()
            defer { lock.unlock() }
            return chunks.flatMap { $0 }
        }
    }
}
