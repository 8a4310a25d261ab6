import Foundation

/// A JSON text parsed by iapguard's own strict byte-level parser: the input bytes plus a flat tape of
/// values (see ``JSONByteParser`` for the grammar). Nothing is converted up front: a string becomes a
/// `String` and a number an `Int64`/`Double` only when a field is read, and looking a key up compares
/// bytes. No class instance per value, no `NSString`/`NSNumber`.
///
/// It accepts exactly what `JSONSerialization` accepts on UTF-8 input, except that it is stricter in
/// two documented ways: without ``Options/allowTrailingCommas`` a comma before `]`/`}` is an error, and
/// only UTF-8 is read (`JSONSerialization` also guesses UTF-16/32 from the first bytes). Duplicate keys
/// are kept and the last one wins, as in `JSONSerialization`, unless ``Options/rejectDuplicateKeys`` is
/// set (signed data: a key given twice means two things to two parsers).
public struct JSONDocument: Sendable {
    /// Deepest nesting of arrays and objects accepted (`JSONSerialization`'s limit too).
    public static let maxDepth = 512

    /// Parsing options.
    public struct Options: Sendable {
        /// Accept one comma before a closing `]` or `}` (`JSONSerialization` does; RFC 8259 does not).
        public var allowTrailingCommas: Bool
        /// Refuse an object that holds the same key twice (compared after unescaping), at any depth.
        public var rejectDuplicateKeys: Bool

        public init(allowTrailingCommas: Bool = false, rejectDuplicateKeys: Bool = false) {
            self.allowTrailingCommas = allowTrailingCommas
            self.rejectDuplicateKeys = rejectDuplicateKeys
        }

        /// Strict RFC 8259.
        public static let strict = Options()
        /// What `JSONSerialization` accepts on UTF-8 input: RFC 8259 plus trailing commas.
        public static let foundationCompatible = Options(allowTrailingCommas: true)
        /// Signed data: ``foundationCompatible`` without duplicate keys.
        public static let signed = Options(allowTrailingCommas: true, rejectDuplicateKeys: true)
    }

    let bytes: [UInt8]
    let tape: [JSONTapeEntry]

    /// Parses `input` as one JSON value (any type at the top level).
    public static func parse(_ input: UnsafeRawBufferPointer, options: Options = .strict) throws(JSONParseError)
        -> JSONDocument
    {
        try parse(bytes: Array(input.bindMemory(to: UInt8.self)), options: options)
    }

    /// Parses `input` as one JSON value (any type at the top level).
    public static func parse(_ input: some Collection<UInt8>, options: Options = .strict) throws(JSONParseError)
        -> JSONDocument
    {
        try parse(bytes: Array(input), options: options)
    }

    static func parse(bytes: [UInt8], options: Options) throws(JSONParseError) -> JSONDocument {
        guard bytes.count < Int(UInt32.max) else {
            throw JSONParseError("input longer than 4 GiB", offset: 0)
        }
        let result = bytes.withUnsafeBufferPointer { buffer -> Result<[JSONTapeEntry], JSONParseError> in
            guard let base = buffer.baseAddress, !buffer.isEmpty else {
                return .failure(JSONParseError("unexpected end of input, expected a value", offset: 0))
            }
            var parser = JSONByteParser(
                base: base, count: buffer.count, allowTrailingCommas: options.allowTrailingCommas,
                rejectDuplicateKeys: options.rejectDuplicateKeys)
            do throws(JSONParseError) {
                try parser.parseDocument()
            } catch {
                return .failure(error)
            }
            return .success(parser.tape)
        }
        switch result {
        case .success(let tape): return JSONDocument(bytes: bytes, tape: tape)
        case .failure(let error): throw error
        }
    }

    /// The kind of the value at tape `index` (0 is the top-level value).
    func kind(_ index: Int) -> JSONTapeEntry.Kind { tape[index].kind }

    // MARK: Objects

    /// The tape index of the value of `key` in the object at `object` (the last one when the key is
    /// repeated), or `nil`.
    func member(_ key: String, inObject object: Int) -> Int? {
        var key = key
        return key.withUTF8 { wanted in member(wanted, inObject: object) }
    }

    func member(_ wanted: UnsafeBufferPointer<UInt8>, inObject object: Int) -> Int? {
        let entry = tape[object]
        let end = Int(entry.payload)
        var index = object + 1
        var found: Int?
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            while index < end {
                let key = tape[index]
                if key.kind == .string {
                    let range = key.byteRange
                    if range.count == wanted.count {
                        if let wantedBase = wanted.baseAddress, !wanted.isEmpty {
                            if memcmp(base + range.lowerBound, wantedBase, wanted.count) == 0 { found = index + 1 }
                        } else {
                            found = index + 1
                        }
                    }
                } else if string(at: index).utf8.elementsEqual(wanted) {
                    found = index + 1
                }
                index = tape[index + 1].next(after: index + 1)
            }
        }
        return found
    }

    /// The members of the object at `object`, in document order: (key index, value index).
    func members(ofObject object: Int) -> [(key: Int, value: Int)] {
        var result: [(key: Int, value: Int)] = []
        result.reserveCapacity(Int(tape[object].start))
        var index = object + 1
        let end = Int(tape[object].payload)
        while index < end {
            result.append((index, index + 1))
            index = tape[index + 1].next(after: index + 1)
        }
        return result
    }

    /// The items of the array at `array`, as tape indexes.
    func items(ofArray array: Int) -> [Int] {
        var result: [Int] = []
        result.reserveCapacity(Int(tape[array].start))
        var index = array + 1
        let end = Int(tape[array].payload)
        while index < end {
            result.append(index)
            index = tape[index].next(after: index)
        }
        return result
    }

    // MARK: Scalars

    /// The text of the string at `index` (escapes decoded).
    func string(at index: Int) -> String {
        let entry = tape[index]
        let range = entry.byteRange
        return bytes.withUnsafeBufferPointer { buffer in
            let raw = UnsafeBufferPointer(rebasing: buffer[range])
            if entry.kind == .string { return String(decoding: raw, as: UTF8.self) }
            return Self.unescape(raw)
        }
    }

    /// Whether the string at `index` holds a NUL character (raw NUL bytes cannot occur: they are
    /// control characters).
    func stringContainsNUL(at index: Int) -> Bool {
        tape[index].kind == .escapedString && string(at: index).utf8.contains(0)
    }

    /// The number text of the number at `index`, as written.
    func numberText(at index: Int) -> String {
        let entry = tape[index]
        if entry.kind == .integer { return String(entry.integer) }
        return bytes.withUnsafeBufferPointer { buffer in
            String(decoding: UnsafeBufferPointer(rebasing: buffer[entry.byteRange]), as: UTF8.self)
        }
    }

    /// The value of the number at `index` as a `Double`.
    func double(at index: Int) -> Double {
        let entry = tape[index]
        if entry.kind == .integer { return Double(entry.integer) }
        return Double(numberText(at: index)) ?? .nan
    }

    /// Whether the number at `index` is written without fraction and exponent.
    func isIntegerLiteral(at index: Int) -> Bool {
        let entry = tape[index]
        if entry.kind == .integer { return true }
        return !bytes[entry.byteRange].contains { $0 == UInt8(ascii: ".") || $0 | 0x20 == UInt8(ascii: "e") }
    }

    /// Decodes the escapes of an already validated string body.
    static func unescape(_ raw: UnsafeBufferPointer<UInt8>) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        var i = 0
        func hex4(_ at: Int) -> UInt32 {
            var value: UInt32 = 0
            for offset in 0..<4 { value = value << 4 | UInt32(JSONByteParser.hexValue(raw[at + offset]) ?? 0) }
            return value
        }
        while i < raw.count {
            let byte = raw[i]
            guard byte == UInt8(ascii: "\\") else {
                out.append(byte)
                i += 1
                continue
            }
            let code = raw[i + 1]
            i += 2
            switch code {
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = hex4(i)
                i += 4
                if (0xD800...0xDBFF).contains(scalar) {
                    let low = hex4(i + 2)
                    i += 6
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                if let value = Unicode.Scalar(scalar) { out.append(contentsOf: Array(String(Character(value)).utf8)) }
            default: out.append(code)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: Foundation-shaped values

    /// The whole document as `JSONSerialization` would return it (`[String: Any]`, `[Any]`, `String`,
    /// `NSNumber`, `NSNull`). For compatibility and differential tests; slow.
    public func foundationValue() -> Any { foundationValue(at: 0) }

    func foundationValue(at index: Int) -> Any {
        switch tape[index].kind {
        case .object:
            var map: [String: Any] = [:]
            for (key, value) in members(ofObject: index) { map[string(at: key)] = foundationValue(at: value) }
            return map
        case .array:
            return items(ofArray: index).map { foundationValue(at: $0) }
        case .string, .escapedString:
            return string(at: index)
        case .integer:
            return NSNumber(value: tape[index].integer)
        case .number:
            let text = numberText(at: index)
            if isIntegerLiteral(at: index), let unsigned = UInt64(text) { return NSNumber(value: unsigned) }
            return NSNumber(value: double(at: index))
        case .true:
            return NSNumber(value: true)
        case .false:
            return NSNumber(value: false)
        case .null:
            return NSNull()
        }
    }

    /// A document holding `value` (a Foundation-shaped JSON value, as ``foundationValue()`` returns;
    /// other values are stored as their description).
    public init(foundationValue value: Any) {
        var out: [UInt8] = []
        Self.write(value, to: &out)
        // The writer emits valid JSON; should it ever not, the document is `null`.
        self =
            (try? Self.parse(bytes: out, options: .strict))
            ?? JSONDocument(
                bytes: Array("null".utf8),
                tape: [
                    JSONTapeEntry(kind: .null, start: 0, payload: 0)
                ])
    }

    init(bytes: [UInt8], tape: [JSONTapeEntry]) {
        self.bytes = bytes
        self.tape = tape
    }

    static func write(_ value: Any, to out: inout [UInt8]) {
        switch value {
        case let text as String:
            writeString(text, to: &out)
        case let number as NSNumber:
            if JSONObject.isBoolean(number) {
                out += Array((number.boolValue ? "true" : "false").utf8)
            } else if number.doubleValue.isFinite {
                out += Array(number.stringValue.utf8)
            } else {
                out += Array("null".utf8)
            }
        case let flag as Bool:
            out += Array((flag ? "true" : "false").utf8)
        case let number as Int:
            out += Array(String(number).utf8)
        case let number as Int64:
            out += Array(String(number).utf8)
        case let number as Double:
            out += Array((number.isFinite ? "\(number)" : "null").utf8)
        case is NSNull:
            out += Array("null".utf8)
        case let list as [Any]:
            out.append(UInt8(ascii: "["))
            for (offset, item) in list.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                write(item, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case let map as [String: Any]:
            out.append(UInt8(ascii: "{"))
            for (offset, key) in map.keys.sorted().enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                writeString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                write(map[key] ?? NSNull(), to: &out)
            }
            out.append(UInt8(ascii: "}"))
        default:
            writeString(String(describing: value), to: &out)
        }
    }

    static func writeString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0..<0x20:
                out += Array("\\u00".utf8) + Array(JSONByteParser.hex(byte).utf8)
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
