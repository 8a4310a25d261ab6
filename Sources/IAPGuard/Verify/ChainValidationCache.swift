import Foundation

/// A thread-safe cache of chain verdicts keyed by the exact DER bytes of (leaf, intermediate).
///
/// The trusted roots are fixed per ``JWSVerifier``, so the pair identifies the evaluation. Keys compare
/// the full DER bytes, so a forged certificate can never hit another certificate's entry. When the cache
/// holds `capacity` entries it is emptied (a flood of distinct forged chains cannot grow it without bound).
final class ChainValidationCache: @unchecked Sendable {
    struct Key: Hashable, Sendable {
        let leafDER: Data
        let intermediateDER: Data
        /// Hashed once, outside the lock.
        private let digest: Int

        init(leafDER: Data, intermediateDER: Data) {
            self.leafDER = leafDER
            self.intermediateDER = intermediateDER
            var hasher = Hasher()
            hasher.combine(leafDER)
            hasher.combine(intermediateDER)
            digest = hasher.finalize()
        }

        static func == (lhs: Key, rhs: Key) -> Bool {
            lhs.digest == rhs.digest && lhs.leafDER == rhs.leafDER && lhs.intermediateDER == rhs.intermediateDER
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(digest)
        }
    }

    private let lock = NSLock()
    private var entries: [Key: ChainVerdict] = [:]
    private let capacity: Int

    init(capacity: Int = 4096) {
        self.capacity = capacity
    }

    func verdict(for key: Key) -> ChainVerdict? {
        lock.lock()
        defer { lock.unlock() }
        return entries[key]
    }

    func store(_ verdict: ChainVerdict, for key: Key) {
        lock.lock()
        defer { lock.unlock() }
        if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
        entries[key] = verdict
    }

    /// Number of cached verdicts.
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return entries.count
    }
}
