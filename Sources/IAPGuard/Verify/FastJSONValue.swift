import Foundation

/// A JSON value read by a small byte-level parser that only accepts a plain subset of JSON.
///
/// ``parse(_:)`` returns a value only when it is sure: the input is ASCII, strings use no `\u` escapes,
/// objects have no duplicate keys and nesting stays shallow. For anything else — malformed input included —
/// it returns `nil` and the caller falls back to Foundation (`JSONSerialization` / `JSONDecoder`), which
/// then decides (and words the error). So every input is accepted or rejected exactly as Foundation does;
/// the fast path only saves the cost of Foundation for the common, well-formed case.
enum FastJSONValue: Sendable, Equatable {
    case object([String: FastJSONValue])
    case array([FastJSONValue])
    case string(String)
    /// A number written as an integer (`-?(0|[1-9][0-9]*)`) that fits in `Int64`.
    case integer(Int64)
    /// Any other number (fraction, exponent or out of `Int64`), as written.
    case number(String)
    case bool(Bool)
    case null

    /// Deepest nesting the fast path handles.
    static let maxDepth = 64

    /// Parses `bytes` as one JSON value (surrounding JSON whitespace allowed), or `nil` when the input is
    /// outside the subset or malformed.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> FastJSONValue? {
        var parser = Parser(bytes: bytes)
        parser.skipWhitespace()
        guard let value = parser.value(depth: 0) else { return nil }
        parser.skipWhitespace()
        return parser.index == bytes.count ? value : nil
    }

    /// Parses `data` (see ``parse(_:)``).
    static func parse(_ data: Data) -> FastJSONValue? {
        data.withUnsafeBytes { raw in parse(raw.bindMemory(to: UInt8.self)) }
    }

    /// The members when this is an object.
    var objectValue: [String: FastJSONValue]? {
        if case .object(let members) = self { return members }
        return nil
    }

    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) {
            self.bytes = bytes
        }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) -> FastJSONValue? {
            guard index < bytes.count, depth < FastJSONValue.maxDepth else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "{"): return object(depth: depth)
            case UInt8(ascii: "["): return array(depth: depth)
            case UInt8(ascii: "\""): return string().map(FastJSONValue.string)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
            default: return nil
            }
        }

        mutating func literal(_ word: StaticString, _ result: FastJSONValue) -> FastJSONValue? {
            let count = word.utf8CodeUnitCount
            guard bytes.count - index >= count else { return nil }
            let start = word.utf8Start
            for offset in 0..<count where bytes[index + offset] != start[offset] { return nil }
            index += count
            return result
        }

        mutating func object(depth: Int) -> FastJSONValue? {
            index += 1  // {
            var members: [String: FastJSONValue] = [:]
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let key = string() else { return nil }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                index += 1
                skipWhitespace()
                guard let member = value(depth: depth + 1) else { return nil }
                // Duplicate keys: leave the decision to Foundation.
                guard members.updateValue(member, forKey: key) == nil else { return nil }
                skipWhitespace()
                guard index < bytes.count else { return nil }
                switch bytes[index] {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"):
                    index += 1
                    return .object(members)
                default: return nil
                }
            }
        }

        mutating func array(depth: Int) -> FastJSONValue? {
            index += 1  // [
            var items: [FastJSONValue] = []
            skipWhitespace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(items)
            }
            while true {
                skipWhitespace()
                guard let item = value(depth: depth + 1) else { return nil }
                items.append(item)
                skipWhitespace()
                guard index < bytes.count else { return nil }
                switch bytes[index] {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"):
                    index += 1
                    return .array(items)
                default: return nil
                }
            }
        }

        /// A string without `\u` escapes, all ASCII. `index` is at the opening quote.
        mutating func string() -> String? {
            index += 1
            let start = index
            var escaped = false
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") { break }
                if byte < 0x20 || byte >= 0x80 { return nil }
                if byte == UInt8(ascii: "\\") {
                    escaped = true
                    index += 1
                    guard index < bytes.count else { return nil }
                    switch bytes[index] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                        UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        break
                    default:
                        return nil
                    }
                }
                index += 1
            }
            guard index < bytes.count else { return nil }
            let raw = UnsafeBufferPointer(rebasing: bytes[start..<index])
            index += 1  // closing quote
            guard escaped else { return String(decoding: raw, as: UTF8.self) }
            var unescaped: [UInt8] = []
            unescaped.reserveCapacity(raw.count)
            var i = 0
            while i < raw.count {
                var byte = raw[i]
                if byte == UInt8(ascii: "\\") {
                    i += 1
                    switch raw[i] {
                    case UInt8(ascii: "b"): byte = 0x08
                    case UInt8(ascii: "f"): byte = 0x0C
                    case UInt8(ascii: "n"): byte = 0x0A
                    case UInt8(ascii: "r"): byte = 0x0D
                    case UInt8(ascii: "t"): byte = 0x09
                    default: byte = raw[i]
                    }
                }
                unescaped.append(byte)
                i += 1
            }
            return String(decoding: unescaped, as: UTF8.self)
        }

        /// RFC 8259 number grammar.
        mutating func number() -> FastJSONValue? {
            let start = index
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
            } else if isDigit(bytes[index]) {
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            } else {
                return nil
            }
            var integral = true
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                integral = false
                index += 1
                guard index < bytes.count, isDigit(bytes[index]) else { return nil }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                integral = false
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard index < bytes.count, isDigit(bytes[index]) else { return nil }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            if integral, let value = Int64(text) { return .integer(value) }
            // Overflowing or very long numbers: Foundation decides.
            guard text.utf8.count <= 40, let double = Double(text), double.isFinite else { return nil }
            return .number(text)
        }

        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    }
}
