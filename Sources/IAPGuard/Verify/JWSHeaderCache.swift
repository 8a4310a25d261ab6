import Foundation

/// Decoded JWS headers, keyed by the exact bytes of their base64url text.
///
/// Apple signs a day of payloads with a handful of certificate chains, so the ~4.5 KB header (`alg` and the
/// three `x5c` certificates) repeats verbatim. Decoding it (base64url, JSON, three base64 certificates) costs
/// more than everything else ``CompactJWS`` does; a hit costs one byte comparison. Entries are a pure
/// function of their key and only well-formed headers are stored. A handful of recent headers is kept
/// (round robin), so a stream of distinct forged headers only costs the comparisons.
final class JWSHeaderCache: @unchecked Sendable {
    /// A decoded header.
    struct Entry {
        let encoded: [UInt8]
        let header: Data
        let algorithm: String?
        let chain: [Data]
    }

    /// The cache ``CompactJWS`` uses.
    static let shared = JWSHeaderCache()

    private let lock = NSLock()
    private var entries: [Entry] = []
    private var next = 0
    private let capacity: Int

    init(capacity: Int = 16) {
        self.capacity = capacity
    }

    /// The entry whose key is exactly `encoded`, if cached.
    func lookup(_ encoded: UnsafeBufferPointer<UInt8>) -> Entry? {
        lock.lock()
        defer { lock.unlock() }
        for entry in entries where entry.encoded.count == encoded.count {
            let same = entry.encoded.withUnsafeBufferPointer { stored in
                guard let a = stored.baseAddress, let b = encoded.baseAddress else { return stored.count == 0 }
                return memcmp(a, b, stored.count) == 0
            }
            if same { return entry }
        }
        return nil
    }

    /// Stores a decoded header (replacing the oldest entry when full).
    func store(_ entry: Entry) {
        lock.lock()
        defer { lock.unlock() }
        if entries.count < capacity {
            entries.append(entry)
        } else {
            entries[next] = entry
            next = (next + 1) % capacity
        }
    }
}
