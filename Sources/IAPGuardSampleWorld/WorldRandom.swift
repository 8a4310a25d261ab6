/// A small, seedable pseudo-random generator for the sample world: xoshiro256** seeded through
/// SplitMix64. Its output depends only on the seed, never on the platform or the Swift version, so the
/// same seed always yields the same world. Not for cryptography.
struct WorldRandom: RandomNumberGenerator, Sendable {
    private var s0: UInt64
    private var s1: UInt64
    private var s2: UInt64
    private var s3: UInt64

    /// A generator seeded from `seed`.
    init(seed: UInt64) {
        var sm = seed
        s0 = WorldRandom.splitMix(&sm)
        s1 = WorldRandom.splitMix(&sm)
        s2 = WorldRandom.splitMix(&sm)
        s3 = WorldRandom.splitMix(&sm)
        if s0 | s1 | s2 | s3 == 0 { s0 = 0x9E37_79B9_7F4A_7C15 }
    }

    /// An independent stream for (`seed`, `stream`, `index`): e.g. one per user, so a user's records do
    /// not depend on how many users came before.
    init(seed: UInt64, stream: UInt64, index: UInt64) {
        var sm = seed ^ (stream &* 0xD1B5_4A32_D192_ED03)
        _ = WorldRandom.splitMix(&sm)
        sm ^= index &* 0x9E37_79B9_7F4A_7C15
        self.init(seed: WorldRandom.splitMix(&sm))
    }

    static func splitMix(_ state: inout UInt64) -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func next() -> UInt64 {
        let result = rotl(s1 &* 5, 7) &* 9
        let t = s1 << 17
        s2 ^= s0
        s3 ^= s1
        s1 ^= s2
        s0 ^= s3
        s2 ^= t
        s3 = rotl(s3, 45)
        return result
    }

    private func rotl(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }

    /// A uniform integer in `range` (own algorithm, stable across Swift versions).
    mutating func int(_ range: ClosedRange<Int>) -> Int {
        let span = UInt64(range.upperBound - range.lowerBound) &+ 1
        if span == 0 { return Int(truncatingIfNeeded: next()) }
        let limit = UInt64.max - UInt64.max % span
        var value = next()
        while value >= limit { value = next() }
        return range.lowerBound + Int(value % span)
    }

    /// A uniform integer in `range`.
    mutating func int(_ range: Range<Int>) -> Int { int(range.lowerBound...(range.upperBound - 1)) }

    /// A uniform Int64 in `range`.
    mutating func int64(_ range: ClosedRange<Int64>) -> Int64 {
        let span = UInt64(range.upperBound - range.lowerBound) &+ 1
        let limit = UInt64.max - UInt64.max % span
        var value = next()
        while value >= limit { value = next() }
        return range.lowerBound + Int64(value % span)
    }

    /// A uniform double in [0, 1).
    mutating func unit() -> Double { Double(next() >> 11) * 0x1.0p-53 }

    /// `true` with probability `p`.
    mutating func chance(_ p: Double) -> Bool { unit() < p }

    /// One element, picked uniformly.
    mutating func pick<T>(_ items: [T]) -> T { items[int(0..<items.count)] }

    /// One element, picked by weight.
    mutating func weighted<T>(_ items: [(T, Int)]) -> T {
        let total = items.reduce(0) { $0 + $1.1 }
        var r = int(0..<total)
        for (item, weight) in items {
            if r < weight { return item }
            r -= weight
        }
        return items[items.count - 1].0
    }

    /// `count` random bytes.
    mutating func bytes(_ count: Int) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            var v = next()
            for _ in 0..<8 where out.count < count {
                out.append(UInt8(truncatingIfNeeded: v))
                v >>= 8
            }
        }
        return out
    }

    /// A version-4 UUID in lower case, as Apple prints `appAccountToken`.
    mutating func uuid() -> String {
        var b = bytes(16)
        b[6] = (b[6] & 0x0F) | 0x40
        b[8] = (b[8] & 0x3F) | 0x80
        let hex = b.map { byte -> String in
            let s = String(byte, radix: 16)
            return s.count == 1 ? "0" + s : s
        }
        return hex[0..<4].joined() + "-" + hex[4..<6].joined() + "-" + hex[6..<8].joined() + "-"
            + hex[8..<10].joined() + "-" + hex[10..<16].joined()
    }
}
