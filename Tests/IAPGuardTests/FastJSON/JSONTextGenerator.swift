/// Deterministic random JSON texts for the differential tests: valid documents with every string
/// escape, raw Unicode, numbers at the limits and deep nesting, and byte-level mutations of them.
struct JSONTextGenerator {
    /// SplitMix64: small, seeded, the same on every platform.
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }

    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }

    static let numbers = [
        "0", "-0", "1", "-1", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
        "-9223372036854775809", "18446744073709551615", "18446744073709551616", "1596771003000", "0.5", "-0.0",
        "1e308", "1.7976931348623157e308", "-1.7976931348623157e308", "5e-324", "1e-400", "2.5E-3", "1E+2",
        "123456789012345678901234567890", "0.1234567890123456789012345", "1e22", "9007199254740993",
    ]

    static let escapes = [
        #"\""#, #"\\"#, #"\/"#, #"\b"#, #"\f"#, #"\n"#, #"\r"#, #"\t"#, #"\u0000"#, #"\u001f"#, #"\u00e9"#,
        #"\u00E9"#, #"\u2028"#, #"\uffff"#, #"\ud83d\ude00"#, #"\uD834\uDD1E"#, #"\udbff\udfff"#,
    ]

    static let raw = ["a", "Z", " ", "é", "€", "😀", "\u{7F}", "\u{FFFF}", "日本", "ß", "0", "{", "]", ",", ":"]

    mutating func whitespace() -> String {
        below(4) == 0 ? pick([" ", "\t", "\n", "\r\n", "  "]) : ""
    }

    mutating func string() -> String {
        var text = "\""
        for _ in 0..<below(24) {
            switch below(3) {
            case 0: text += pick(Self.escapes)
            default: text += pick(Self.raw)
            }
        }
        if below(5) == 0 { text += String(repeating: "x", count: below(40)) }
        return text + "\""
    }

    mutating func number() -> String {
        switch below(3) {
        case 0: return pick(Self.numbers)
        case 1: return String(Int64(bitPattern: next()) >> UInt64(below(64)))
        default:
            let mantissa = String(below(1_000_000)) + (below(2) == 0 ? "" : "." + String(below(1000)))
            return mantissa + (below(2) == 0 ? "" : pick(["e", "E", "e+", "e-", "E-"]) + String(below(300)))
        }
    }

    mutating func value(depth: Int) -> String {
        let roll = depth > 6 ? below(5) : below(8)
        switch roll {
        case 0: return string()
        case 1: return number()
        case 2: return pick(["true", "false", "null"])
        case 3: return string()
        case 4: return number()
        case 5, 6:
            let count = below(5)
            let members = (0..<count).map { _ in
                whitespace() + string() + whitespace() + ":" + whitespace() + value(depth: depth + 1) + whitespace()
            }
            return "{" + members.joined(separator: ",") + "}"
        default:
            let count = below(5)
            let items = (0..<count).map { _ in whitespace() + value(depth: depth + 1) + whitespace() }
            return "[" + items.joined(separator: ",") + "]"
        }
    }

    /// A valid document (any value at the top).
    mutating func document() -> [UInt8] {
        Array((whitespace() + value(depth: 0) + whitespace()).utf8)
    }

    static let mutationBytes: [UInt8] = [
        0x22, 0x5C, 0x2C, 0x3A, 0x5B, 0x5D, 0x7B, 0x7D, 0x30, 0x31, 0x2D, 0x2B, 0x2E, 0x65, 0x75, 0x00, 0x09, 0x0A,
        0x20, 0x80, 0xBF, 0xC0, 0xC3, 0xE0, 0xED, 0xF0, 0xF4, 0xF5, 0xFF,
    ]

    /// `bytes` with 1–3 random edits (delete, insert, replace, truncate).
    mutating func mutate(_ bytes: [UInt8]) -> [UInt8] {
        var out = bytes
        for _ in 0...below(3) {
            let at = out.isEmpty ? 0 : below(out.count)
            switch below(4) {
            case 0: if !out.isEmpty { out.remove(at: at) }
            case 1: out.insert(pick(Self.mutationBytes), at: at)
            case 2: if !out.isEmpty { out[at] = pick(Self.mutationBytes) }
            default: out = Array(out.prefix(at))
            }
        }
        return out
    }
}
