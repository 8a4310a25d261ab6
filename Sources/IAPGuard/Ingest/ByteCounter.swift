/// Counts one byte value in a buffer eight bytes at a time.
///
/// A grown input file's old part is read to prove it was only appended to, and its line breaks (and, for
/// CSV, its double quotes) are counted on the way; a byte-by-byte loop cost more than the SHA-256 of the
/// same bytes. Each 64-bit word is compared with the byte repeated, and the zero bytes of the difference are
/// counted exactly (no carries between bytes: the high bit of each byte is handled apart).
enum ByteCounter {
    private static let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
    private static let high: UInt64 = 0x8080_8080_8080_8080

    /// How many bytes of `buffer` equal `byte`.
    static func count(_ byte: UInt8, in buffer: UnsafeRawBufferPointer) -> Int {
        let pattern = UInt64(byte) &* 0x0101_0101_0101_0101
        var total = 0
        var offset = 0
        let words = buffer.count / 8
        for _ in 0..<words {
            let x = buffer.loadUnaligned(fromByteOffset: offset, as: UInt64.self) ^ pattern
            // High bit set for each byte of x that is not zero; the other bytes are the matches.
            let nonZero = ((x & low7) &+ low7) | x
            total += (~nonZero & high).nonzeroBitCount
            offset += 8
        }
        while offset < buffer.count {
            if buffer[offset] == byte { total += 1 }
            offset += 1
        }
        return total
    }
}
