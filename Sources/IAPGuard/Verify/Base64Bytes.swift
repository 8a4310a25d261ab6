import Foundation

/// Byte-level base64 decoding for ``CompactJWS``: no `String` round trips.
///
/// The byte-level decoder reads canonical input (the alphabet, `=` only as final padding). Anything else is
/// handed to the `String` based decoder it replaces (`Base64URL.decode` for JWS parts, `Data(base64Encoded:)`
/// for `x5c`), whose answer stands — Foundation accepts a few odd paddings (`YQ=a`) — so the result is
/// always exactly theirs; the tests compare them on a corpus.
enum Base64Bytes {
    /// 0–63 for an alphabet character, 0xFF otherwise. Index by byte.
    private static let standardTable: [UInt8] = table(plus: UInt8(ascii: "+"), slash: UInt8(ascii: "/"))
    private static let urlTable: [UInt8] = table(plus: UInt8(ascii: "-"), slash: UInt8(ascii: "_"))

    private static func table(plus: UInt8, slash: UInt8) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8.enumerated() {
            table[Int(byte)] = UInt8(index)
        }
        table[Int(plus)] = 62
        table[Int(slash)] = 63
        return table
    }

    /// Base64url (RFC 4648 §5) as `Base64URL.decode` reads it.
    static func decodeURL(_ bytes: UnsafeBufferPointer<UInt8>) -> Data? {
        canonicalURL(bytes) ?? Base64URL.decode(String(decoding: bytes, as: UTF8.self))
    }

    /// Standard base64 as `Data(base64Encoded:)` reads it.
    static func decodeStandard(_ bytes: UnsafeBufferPointer<UInt8>) -> Data? {
        canonicalStandard(bytes) ?? Data(base64Encoded: String(decoding: bytes, as: UTF8.self))
    }

    /// Canonical base64url: padding optional, `=` only as final padding.
    private static func canonicalURL(_ bytes: UnsafeBufferPointer<UInt8>) -> Data? {
        let count = bytes.count
        if count % 4 == 1 { return nil }
        let paddedCount = (count + 3) / 4 * 4
        var trailing = 0
        while trailing < count, bytes[count - 1 - trailing] == UInt8(ascii: "=") { trailing += 1 }
        let padding = trailing + (paddedCount - count)
        guard padding <= 2 else { return nil }
        return decode(bytes, significant: count - trailing, table: urlTable)
    }

    /// Canonical standard base64: a multiple of 4 characters with at most two `=` of padding at the end.
    private static func canonicalStandard(_ bytes: UnsafeBufferPointer<UInt8>) -> Data? {
        let count = bytes.count
        guard count % 4 == 0 else { return nil }
        var trailing = 0
        while trailing < count, bytes[count - 1 - trailing] == UInt8(ascii: "=") { trailing += 1 }
        guard trailing <= 2 else { return nil }
        return decode(bytes, significant: count - trailing, table: standardTable)
    }

    /// Decodes the first `significant` characters (every one must be in `table`; the callers have checked
    /// that the padding after them completes the last quantum).
    private static func decode(_ bytes: UnsafeBufferPointer<UInt8>, significant: Int, table: [UInt8]) -> Data? {
        // A last group of one character cannot hold a byte.
        if significant % 4 == 1 { return nil }
        let outputCount = significant / 4 * 3 + max(0, significant % 4 - 1)
        var output = Data(count: outputCount)
        let ok = output.withUnsafeMutableBytes { raw -> Bool in
            guard let out = raw.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return outputCount == 0 }
            return table.withUnsafeBufferPointer { t -> Bool in
                var o = 0
                var i = 0
                let whole = significant / 4 * 4
                while i < whole {
                    let a = t[Int(bytes[i])]
                    let b = t[Int(bytes[i + 1])]
                    let c = t[Int(bytes[i + 2])]
                    let d = t[Int(bytes[i + 3])]
                    if (a | b | c | d) & 0xC0 != 0 { return false }
                    out[o] = a << 2 | b >> 4
                    out[o + 1] = b << 4 | c >> 2
                    out[o + 2] = c << 6 | d
                    o += 3
                    i += 4
                }
                switch significant - whole {
                case 2:
                    let a = t[Int(bytes[i])]
                    let b = t[Int(bytes[i + 1])]
                    if (a | b) & 0xC0 != 0 { return false }
                    out[o] = a << 2 | b >> 4
                case 3:
                    let a = t[Int(bytes[i])]
                    let b = t[Int(bytes[i + 1])]
                    let c = t[Int(bytes[i + 2])]
                    if (a | b | c) & 0xC0 != 0 { return false }
                    out[o] = a << 2 | b >> 4
                    out[o + 1] = b << 4 | c >> 2
                default:
                    break
                }
                return true
            }
        }
        return ok ? output : nil
    }
}
