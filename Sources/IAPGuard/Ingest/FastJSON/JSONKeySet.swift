/// A fixed set of object keys matched against a ``JSONDocument``'s raw key bytes, without building a
/// `String` per key: finding the members of a signed payload outside Apple's schema costs a few byte
/// comparisons per member on the ingest path.
public struct JSONKeySet: Sendable {
    /// The keys' UTF-8 bytes, grouped by length.
    private let byLength: [Int: [[UInt8]]]

    /// A set holding `keys`.
    public init(_ keys: some Sequence<String>) {
        var groups: [Int: [[UInt8]]] = [:]
        for key in Set(keys) { groups[key.utf8.count, default: []].append(Array(key.utf8)) }
        byLength = groups
    }

    /// Whether the key whose bytes (as written, no escapes) are `bytes` is in the set.
    func contains(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let candidates = byLength[bytes.count] else { return false }
        return candidates.contains { $0.elementsEqual(bytes) }
    }

    /// Whether `key` is in the set.
    public func contains(_ key: String) -> Bool {
        var key = key
        return key.withUTF8 { contains($0) }
    }
}

extension JSONDocument {
    /// The members of the object at `object` whose keys are not in `known`, in document order.
    func members(ofObject object: Int, notIn known: JSONKeySet) -> [(key: Int, value: Int)] {
        var result: [(key: Int, value: Int)] = []
        let end = Int(tape[object].payload)
        var index = object + 1
        bytes.withUnsafeBufferPointer { buffer in
            while index < end {
                let key = tape[index]
                let isKnown: Bool
                if key.kind == .string {
                    isKnown = known.contains(UnsafeBufferPointer(rebasing: buffer[key.byteRange]))
                } else {
                    isKnown = known.contains(string(at: index))
                }
                if !isKnown { result.append((index, index + 1)) }
                index = tape[index + 1].next(after: index + 1)
            }
        }
        return result
    }
}
