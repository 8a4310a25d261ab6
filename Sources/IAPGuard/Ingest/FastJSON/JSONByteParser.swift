import Foundation

/// The strict RFC 8259 recursive-descent parser behind ``JSONDocument``: reads bytes, validates every
/// one of them (UTF-8, escapes, the number grammar) and records the values on a flat tape. Strings and
/// numbers are not converted here; ``JSONDocument`` does that when a field is read.
///
/// What is accepted, rule by rule (see docs/data-contract.md, *JSON strictness*):
/// - whitespace is space, tab, LF and CR only; one UTF-8 byte order mark is skipped at the very start;
/// - strings: raw bytes must be valid UTF-8 (no overlong forms, no encoded surrogates, nothing above
///   U+10FFFF) and not control characters (< 0x20); escapes are `\" \\ \/ \b \f \n \r \t \uXXXX`; a
///   `\u` high surrogate must be followed by a `\u` low surrogate, a lone low surrogate is an error
///   (as `JSONSerialization` does); `\u0000` is allowed;
/// - numbers: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`, and the value must be finite as a
///   `Double` (`1e400` is rejected, `1e-400` reads as 0 — both as `JSONSerialization`);
/// - literals `true`, `false`, `null` only (no `NaN`, `Infinity`, comments or single quotes);
/// - nesting up to ``JSONDocument/maxDepth`` (512, as `JSONSerialization`);
/// - a trailing comma before `]` or `}` only with ``JSONDocument/Options/allowTrailingCommas``;
/// - duplicate object keys are kept and lookups return the last one (as `JSONSerialization`), unless
///   ``JSONDocument/Options/rejectDuplicateKeys`` is set: then a key that occurs twice in one object
///   (compared after unescaping) is an error, found while the object is parsed.
struct JSONByteParser {
    let base: UnsafePointer<UInt8>
    let count: Int
    let allowTrailingCommas: Bool
    let rejectDuplicateKeys: Bool
    var index = 0
    var tape: [JSONTapeEntry] = []

    /// Objects with more keys than this are checked with a hash set instead of pairwise comparison.
    static let pairwiseKeyLimit = 24

    init(base: UnsafePointer<UInt8>, count: Int, allowTrailingCommas: Bool, rejectDuplicateKeys: Bool = false) {
        self.base = base
        self.count = count
        self.allowTrailingCommas = allowTrailingCommas
        self.rejectDuplicateKeys = rejectDuplicateKeys
        tape.reserveCapacity(Swift.max(8, count / 12))
    }

    typealias Failure = JSONParseError

    // MARK: Document

    mutating func parseDocument() throws(Failure) {
        if count >= 3, base[0] == 0xEF, base[1] == 0xBB, base[2] == 0xBF { index = 3 }
        skipWhitespace()
        guard index < count else { throw Failure("unexpected end of input, expected a value", offset: index) }
        try parseValue(depth: 0)
        skipWhitespace()
        guard index == count else { throw unexpected("after the top-level value") }
    }

    @inline(__always)
    mutating func skipWhitespace() {
        while index < count {
            switch base[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    func unexpected(_ context: String) -> Failure {
        guard index < count else { return Failure("unexpected end of input \(context)", offset: index) }
        let byte = base[index]
        if byte >= 0x80 {
            // Not JSON either way; say whether the bytes are at least UTF-8.
            let length = Self.utf8SequenceLength(base, index, count)
            if length == 0 {
                return Failure("invalid UTF-8 byte 0x\(Self.hex(byte))", offset: index, isInvalidUTF8: true)
            }
            return Failure("unexpected non-ASCII character \(context)", offset: index)
        }
        let shown = byte >= 0x20 && byte < 0x7F ? "'\(Character(Unicode.Scalar(byte)))'" : "byte 0x\(Self.hex(byte))"
        return Failure("unexpected \(shown) \(context)", offset: index)
    }

    static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
    }

    // MARK: Values

    mutating func parseValue(depth: Int) throws(Failure) {
        guard index < count else { throw Failure("unexpected end of input, expected a value", offset: index) }
        switch base[index] {
        case UInt8(ascii: "\""): try parseString()
        case UInt8(ascii: "{"): try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): try parseArray(depth: depth + 1)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try parseNumber()
        case UInt8(ascii: "t"): try parseLiteral("true", .true)
        case UInt8(ascii: "f"): try parseLiteral("false", .false)
        case UInt8(ascii: "n"): try parseLiteral("null", .null)
        default: throw unexpected("where a value was expected")
        }
    }

    mutating func parseLiteral(_ word: StaticString, _ kind: JSONTapeEntry.Kind) throws(Failure) {
        let length = word.utf8CodeUnitCount
        let text = word.utf8Start
        for offset in 0..<length {
            guard index + offset < count, base[index + offset] == text[offset] else {
                index += offset
                throw unexpected("in the literal \(word)")
            }
        }
        tape.append(JSONTapeEntry(kind: kind, start: UInt32(truncatingIfNeeded: index), payload: 0))
        index += length
    }

    mutating func parseObject(depth: Int) throws(Failure) {
        guard depth <= JSONDocument.maxDepth else {
            throw Failure("nesting deeper than \(JSONDocument.maxDepth) arrays and objects", offset: index)
        }
        let slot = tape.count
        tape.append(JSONTapeEntry(kind: .object, start: 0, payload: 0))
        index += 1  // {
        skipWhitespace()
        var members: UInt32 = 0
        var keyCheck = KeyCheck(slot: slot)
        if index < count, base[index] == UInt8(ascii: "}") {
            index += 1
        } else {
            while true {
                guard index < count, base[index] == UInt8(ascii: "\"") else {
                    throw unexpected("where an object key (a string) was expected")
                }
                let keyStart = index
                try parseString()
                if rejectDuplicateKeys {
                    try checkDuplicate(key: tape.count - 1, &keyCheck, at: keyStart)
                }
                skipWhitespace()
                guard index < count, base[index] == UInt8(ascii: ":") else {
                    throw unexpected("where ':' after an object key was expected")
                }
                index += 1
                skipWhitespace()
                try parseValue(depth: depth)
                members += 1
                skipWhitespace()
                guard index < count else { throw Failure("unexpected end of input in an object", offset: index) }
                let byte = base[index]
                if byte == UInt8(ascii: "}") {
                    index += 1
                    break
                }
                guard byte == UInt8(ascii: ",") else { throw unexpected("where ',' or '}' was expected in an object") }
                index += 1
                skipWhitespace()
                if allowTrailingCommas, index < count, base[index] == UInt8(ascii: "}") {
                    index += 1
                    break
                }
            }
        }
        tape[slot].start = members
        tape[slot].payload = UInt64(tape.count)
    }

    /// The duplicate-key check of one object being parsed.
    struct KeyCheck {
        /// The object's tape index (its earlier keys and values follow it on the tape, complete).
        var slot: Int
        /// Keys checked so far.
        var count = 0
        /// One bit per key hash seen (``keyHash(_:)``): a key whose bit is clear cannot be a duplicate.
        var mask: UInt64 = 0
        /// The decoded keys, once the object has more than ``pairwiseKeyLimit`` of them.
        var seen: Set<[UInt8]>?
    }

    /// The tape indexes of the keys of the object at `slot` that come before tape index `end`.
    func earlierKeys(of slot: Int, before end: Int) -> [Int] {
        var keys: [Int] = []
        var index = slot + 1
        while index < end {
            keys.append(index)
            index = tape[index + 1].next(after: index + 1)
        }
        return keys
    }

    /// Fails when the key at tape index `key` equals an earlier key of the same object. Small objects (all
    /// of Apple's) look the key's hash up in a 64-bit mask and compare bytes only on a hit (walking the
    /// object's earlier members on the tape); larger ones keep a set of the decoded keys, so an object with
    /// many keys stays linear.
    func checkDuplicate(key: Int, _ check: inout KeyCheck, at offset: Int) throws(Failure) {
        let entry = tape[key]
        defer { check.count += 1 }
        if check.seen == nil, check.count < Self.pairwiseKeyLimit {
            let bit: UInt64 = 1 << (keyHash(entry) & 63)
            if check.mask & bit != 0 {
                for other in earlierKeys(of: check.slot, before: key) where sameKey(entry, tape[other]) {
                    throw duplicateKey(entry, at: offset)
                }
            }
            check.mask |= bit
            return
        }
        if check.seen == nil {
            let earlier = earlierKeys(of: check.slot, before: key)
            var set = Set<[UInt8]>(minimumCapacity: earlier.count * 2)
            for other in earlier { set.insert(keyBytes(tape[other])) }
            check.seen = set
        }
        guard check.seen?.insert(keyBytes(entry)).inserted == true else { throw duplicateKey(entry, at: offset) }
    }

    /// A hash of a key's decoded text from its length, first and last bytes (equal keys hash equally).
    func keyHash(_ entry: JSONTapeEntry) -> Int {
        var length = Int(entry.payload) - Int(entry.start)
        var first: UInt8 = 0
        var last: UInt8 = 0
        if entry.kind == .string {
            if length > 0 {
                first = base[Int(entry.start)]
                last = base[Int(entry.payload) - 1]
            }
        } else {
            let bytes = keyBytes(entry)
            length = bytes.count
            first = bytes.first ?? 0
            last = bytes.last ?? 0
        }
        let mixed = (length &* 0x9E37) ^ (Int(first) &* 0x2D) ^ (Int(last) &* 0x61)
        return mixed ^ (mixed >> 6)
    }

    /// Whether two key strings are the same text (escaped ones compared after decoding).
    func sameKey(_ a: JSONTapeEntry, _ b: JSONTapeEntry) -> Bool {
        if a.kind == .string, b.kind == .string {
            let length = Int(a.payload) - Int(a.start)
            guard length == Int(b.payload) - Int(b.start) else { return false }
            return memcmp(base + Int(a.start), base + Int(b.start), length) == 0
        }
        return keyBytes(a) == keyBytes(b)
    }

    /// The decoded UTF-8 bytes of a key.
    func keyBytes(_ entry: JSONTapeEntry) -> [UInt8] {
        let raw = UnsafeBufferPointer(start: base + Int(entry.start), count: Int(entry.payload) - Int(entry.start))
        if entry.kind == .string { return Array(raw) }
        return Array(JSONDocument.unescape(raw).utf8)
    }

    func duplicateKey(_ entry: JSONTapeEntry, at offset: Int) -> Failure {
        let text = String(decoding: keyBytes(entry), as: UTF8.self)
        let shown = text.count > 60 ? String(text.prefix(60)) + "…" : text
        return Failure("duplicate key \"\(shown)\"", offset: offset, isDuplicateKey: true)
    }

    mutating func parseArray(depth: Int) throws(Failure) {
        guard depth <= JSONDocument.maxDepth else {
            throw Failure("nesting deeper than \(JSONDocument.maxDepth) arrays and objects", offset: index)
        }
        let slot = tape.count
        tape.append(JSONTapeEntry(kind: .array, start: 0, payload: 0))
        index += 1  // [
        skipWhitespace()
        var items: UInt32 = 0
        if index < count, base[index] == UInt8(ascii: "]") {
            index += 1
        } else {
            while true {
                try parseValue(depth: depth)
                items += 1
                skipWhitespace()
                guard index < count else { throw Failure("unexpected end of input in an array", offset: index) }
                let byte = base[index]
                if byte == UInt8(ascii: "]") {
                    index += 1
                    break
                }
                guard byte == UInt8(ascii: ",") else { throw unexpected("where ',' or ']' was expected in an array") }
                index += 1
                skipWhitespace()
                if allowTrailingCommas, index < count, base[index] == UInt8(ascii: "]") {
                    index += 1
                    break
                }
            }
        }
        tape[slot].start = items
        tape[slot].payload = UInt64(tape.count)
    }

    // MARK: Strings

    /// Any byte of `word` that is `"`, `\`, a control character or non-ASCII sets that byte's top bit
    /// (exact for the first such byte; bytes after it may be flagged falsely, which is harmless).
    @inline(__always)
    static func specialBytes(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let high: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let hasQuote = (quote &- ones) & ~quote
        let hasBackslash = (backslash &- ones) & ~backslash
        let control = (word &- ones &* 0x20) & ~word
        return (hasQuote | hasBackslash | control | word) & high
    }

    mutating func parseString() throws(Failure) {
        let quote = index
        index += 1
        let start = index
        var escaped = false
        let raw = UnsafeRawPointer(base)
        while true {
            while index &+ 8 <= count {
                let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                let special = Self.specialBytes(word)
                if special == 0 {
                    index &+= 8
                } else {
                    index &+= special.trailingZeroBitCount >> 3
                    break
                }
            }
            guard index < count else {
                throw Failure("unterminated string (opened at byte \(quote))", offset: index)
            }
            let byte = base[index]
            if byte == UInt8(ascii: "\"") { break }
            if byte == UInt8(ascii: "\\") {
                escaped = true
                try parseEscape()
            } else if byte < 0x20 {
                throw Failure("unescaped control character 0x\(Self.hex(byte)) in a string", offset: index)
            } else if byte < 0x80 {
                index += 1
            } else {
                let length = Self.utf8SequenceLength(base, index, count)
                guard length > 0 else {
                    throw Failure("invalid UTF-8 in a string", offset: index, isInvalidUTF8: true)
                }
                index += length
            }
        }
        tape.append(
            JSONTapeEntry(
                kind: escaped ? .escapedString : .string, start: UInt32(truncatingIfNeeded: start),
                payload: UInt64(index)))
        index += 1  // closing quote
    }

    /// `index` is at a backslash inside a string.
    mutating func parseEscape() throws(Failure) {
        let at = index
        index += 1
        guard index < count else { throw Failure("unterminated escape in a string", offset: at) }
        switch base[index] {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
            UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            index += 1
        case UInt8(ascii: "u"):
            index += 1
            let unit = try hexQuad(escapeAt: at)
            if (0xDC00...0xDFFF).contains(unit) {
                throw Failure("lone low surrogate \\u\(Self.hex4(unit)) in a string", offset: at)
            }
            if (0xD800...0xDBFF).contains(unit) {
                guard index + 1 < count, base[index] == UInt8(ascii: "\\"), base[index + 1] == UInt8(ascii: "u") else {
                    throw Failure("high surrogate \\u\(Self.hex4(unit)) not followed by a low surrogate", offset: at)
                }
                let second = index
                index += 2
                let low = try hexQuad(escapeAt: second)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw Failure("high surrogate \\u\(Self.hex4(unit)) not followed by a low surrogate", offset: at)
                }
            }
        default:
            throw Failure("invalid escape in a string", offset: at)
        }
    }

    /// Four hex digits at `index`.
    mutating func hexQuad(escapeAt: Int) throws(Failure) -> UInt16 {
        guard index + 4 <= count else { throw Failure("\\u escape needs 4 hex digits", offset: escapeAt) }
        var value: UInt16 = 0
        for offset in 0..<4 {
            guard let digit = Self.hexValue(base[index + offset]) else {
                throw Failure("\\u escape needs 4 hex digits", offset: escapeAt)
            }
            value = value << 4 | UInt16(digit)
        }
        index += 4
        return value
    }

    static func hex4(_ unit: UInt16) -> String {
        hex(UInt8(unit >> 8)).lowercased() + hex(UInt8(unit & 0xFF)).lowercased()
    }

    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// The length of the well-formed UTF-8 sequence starting with the non-ASCII byte at `at`, or 0 when
    /// it is not well-formed (Unicode Table 3-7: no overlong forms, no surrogates, nothing past U+10FFFF).
    static func utf8SequenceLength(_ base: UnsafePointer<UInt8>, _ at: Int, _ count: Int) -> Int {
        let lead = base[at]
        func continuation(_ offset: Int, _ range: ClosedRange<UInt8> = 0x80...0xBF) -> Bool {
            at + offset < count && range.contains(base[at + offset])
        }
        switch lead {
        case 0xC2...0xDF:
            return continuation(1) ? 2 : 0
        case 0xE0:
            return continuation(1, 0xA0...0xBF) && continuation(2) ? 3 : 0
        case 0xE1...0xEC, 0xEE...0xEF:
            return continuation(1) && continuation(2) ? 3 : 0
        case 0xED:
            return continuation(1, 0x80...0x9F) && continuation(2) ? 3 : 0
        case 0xF0:
            return continuation(1, 0x90...0xBF) && continuation(2) && continuation(3) ? 4 : 0
        case 0xF1...0xF3:
            return continuation(1) && continuation(2) && continuation(3) ? 4 : 0
        case 0xF4:
            return continuation(1, 0x80...0x8F) && continuation(2) && continuation(3) ? 4 : 0
        default:
            return 0
        }
    }

    // MARK: Numbers

    @inline(__always)
    func isDigit(_ at: Int) -> Bool {
        at < count && base[at] &- UInt8(ascii: "0") < 10
    }

    mutating func parseNumber() throws(Failure) {
        let start = index
        var negative = false
        if base[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        guard isDigit(index) else { throw unexpected("in a number, where a digit was expected") }
        var magnitude: UInt64 = 0
        var overflow = false
        if base[index] == UInt8(ascii: "0") {
            index += 1
            if isDigit(index) { throw Failure("number with a leading zero", offset: start) }
        } else {
            while isDigit(index) {
                let digit = UInt64(base[index] &- UInt8(ascii: "0"))
                let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(digit)
                if o1 || o2 { overflow = true }
                magnitude = sum
                index += 1
            }
        }
        var integral = true
        if index < count, base[index] == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard isDigit(index) else { throw unexpected("after a decimal point, where a digit was expected") }
            while isDigit(index) { index += 1 }
        }
        if index < count, base[index] | 0x20 == UInt8(ascii: "e") {
            integral = false
            index += 1
            if index < count, base[index] == UInt8(ascii: "+") || base[index] == UInt8(ascii: "-") { index += 1 }
            guard isDigit(index) else { throw unexpected("in an exponent, where a digit was expected") }
            while isDigit(index) { index += 1 }
        }
        if integral, !overflow {
            if !negative, magnitude <= UInt64(Int64.max) {
                tape.append(JSONTapeEntry(kind: .integer, start: UInt32(truncatingIfNeeded: start), payload: magnitude))
                return
            }
            if negative, magnitude <= UInt64(Int64.max) + 1 {
                let value = magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
                tape.append(
                    JSONTapeEntry(
                        kind: .integer, start: UInt32(truncatingIfNeeded: start), payload: UInt64(bitPattern: value)))
                return
            }
        }
        let double = Self.double(base, start..<index)
        guard double.isFinite else {
            throw Failure(
                "number \(Self.text(base, start..<index, limit: 40)) is too large for a Double", offset: start)
        }
        tape.append(JSONTapeEntry(kind: .number, start: UInt32(truncatingIfNeeded: start), payload: UInt64(index)))
    }

    /// The `Double` nearest to the (grammar-checked) number text in `range`.
    static func double(_ base: UnsafePointer<UInt8>, _ range: Range<Int>) -> Double {
        Double(String(decoding: UnsafeBufferPointer(start: base + range.lowerBound, count: range.count), as: UTF8.self))
            ?? .nan
    }

    static func text(_ base: UnsafePointer<UInt8>, _ range: Range<Int>, limit: Int) -> String {
        let shown = range.count > limit ? range.lowerBound..<(range.lowerBound + limit) : range
        let text = String(
            decoding: UnsafeBufferPointer(start: base + shown.lowerBound, count: shown.count), as: UTF8.self)
        return range.count > limit ? text + "…" : text
    }
}
