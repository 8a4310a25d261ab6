import Foundation

/// Typed, forgiving-where-Apple-is access to a decoded JSON object, with errors naming the field.
///
/// Apple's legacy responses send numbers as strings; both forms are accepted for numeric fields.
/// Anything else of the wrong type is a ``RecordError`` naming the key.
///
/// Backed by a ``JSONDocument`` (iapguard's strict byte-level parser): a field is converted only when
/// it is read, and a key is found by comparing bytes.
public struct JSONObject: Sendable {
    let document: JSONDocument
    /// Tape index of this object in ``document``.
    let index: Int
    /// A prefix for error messages (`in_app[2].`).
    public let path: String

    /// An object holding `values` (Foundation-shaped: `String`, `NSNumber`, `NSNull`, arrays, dictionaries).
    public init(_ values: [String: Any], path: String = "") {
        self.init(document: JSONDocument(foundationValue: values), index: 0, path: path)
    }

    init(document: JSONDocument, index: Int, path: String) {
        self.document = document
        self.index = index
        self.path = path
    }

    /// The members as `JSONSerialization` would return them (converted on each call: slow).
    public var values: [String: Any] {
        document.foundationValue(at: index) as? [String: Any] ?? [:]
    }

    /// Parses bytes into an object; the top level must be a JSON object. Accepts what
    /// `JSONSerialization` accepts on UTF-8 input (trailing commas included); errors say what is wrong and
    /// at which byte.
    /// With `rejectingDuplicateKeys` (the wrappers of signed data) an object holding a key twice is an error.
    public static func parse<C: Collection>(_ bytes: C, rejectingDuplicateKeys: Bool = false) throws -> JSONObject
    where C.Element == UInt8 {
        let document: JSONDocument
        let options: JSONDocument.Options = rejectingDuplicateKeys ? .signed : .foundationCompatible
        do {
            if let parsed = try bytes.withContiguousStorageIfAvailable({ buffer throws(JSONParseError) in
                try JSONDocument.parse(UnsafeRawBufferPointer(buffer), options: options)
            }) {
                document = parsed
            } else {
                document = try JSONDocument.parse(Array(bytes), options: options)
            }
        } catch let error as JSONParseError {
            // As before: input that is not UTF-8 anywhere is called that, whatever else is wrong with it.
            if error.isInvalidUTF8 || !Self.isValidUTF8(bytes) { throw RecordError("invalid UTF-8") }
            // A file whose lines end with CR only is one long line here: say so, not just where parsing stopped.
            let crInside = bytes.dropLast().contains(0x0D)
            throw RecordError(
                "malformed JSON (\(error))"
                    + (crInside
                        ? "; the line holds a carriage return (CR): lines that end with CR only are one line to "
                            + "JSON Lines, which need LF or CRLF line ends" : ""))
        }
        return try object(document)
    }

    /// The object at the top of `document`, or the error naming what it is instead.
    static func object(_ document: JSONDocument) throws -> JSONObject {
        guard document.kind(0) == .object else {
            throw RecordError("expected a JSON object, found \(typeName(document, 0))")
        }
        return JSONObject(document: document, index: 0, path: "")
    }

    static func isValidUTF8<C: Collection>(_ bytes: C) -> Bool where C.Element == UInt8 {
        var decoder = UTF8()
        var iterator = bytes.makeIterator()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// Whether `value` is JSON `null`. Checked on the metatype: `value is NSNull` on a Swift dictionary or
    /// array bridges the whole container to Foundation first.
    static func isNull(_ value: Any) -> Bool {
        type(of: value) is NSNull.Type
    }

    static func typeName(_ document: JSONDocument, _ index: Int) -> String {
        switch document.kind(index) {
        case .null: return "null"
        case .string, .escapedString: return "text"
        case .true, .false: return "a boolean"
        case .integer, .number: return "a number"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// Tape index of the value of `key`, `nil` when absent or `null`.
    @inline(__always)
    func value(_ key: String) -> Int? {
        guard let found = document.member(key, inObject: index), document.kind(found) != .null else { return nil }
        return found
    }

    public func has(_ key: String) -> Bool {
        value(key) != nil
    }

    /// Text; numbers are accepted and rendered as integers when integral.
    public func string(_ key: String) throws -> String? {
        guard let at = value(key) else { return nil }
        switch document.kind(at) {
        case .string, .escapedString:
            return document.string(at: at)
        case .integer:
            return String(document.tape[at].integer)
        case .number:
            return numberString(at)
        default:
            throw RecordError("\(path)\(key): expected text, found \(Self.typeName(document, at))")
        }
    }

    /// A non-`Int64` number as text: an integer when integral and below 9e15, else as written for integer
    /// literals and the shortest `Double` text otherwise (what `NSNumber.stringValue` gave before).
    func numberString(_ at: Int) -> String {
        let d = document.double(at: at)
        if d.rounded() == d, abs(d) < 9.0e15 { return String(Int64(d)) }
        if document.isIntegerLiteral(at: at) { return document.numberText(at: at) }
        return "\(d)"
    }

    public func requiredString(_ key: String) throws -> String {
        guard let s = try string(key), !s.isEmpty else { throw RecordError("\(path)\(key): missing") }
        return s
    }

    /// An integer; numeric strings (`"1596771003000"`) are accepted.
    public func int64(_ key: String) throws -> Int64? {
        guard let at = value(key) else { return nil }
        return try int64(at: at, key: key)
    }

    func int64(at: Int, key: String) throws -> Int64? {
        switch document.kind(at) {
        case .integer:
            return document.tape[at].integer
        case .string, .escapedString:
            let trimmed = TextTrim.whitespaces(document.string(at: at))
            if trimmed.isEmpty { return nil }
            guard let i = Int64(trimmed) else {
                throw RecordError("\(path)\(key): expected a whole number, found \"\(trimmed.prefix(40))\"")
            }
            return i
        case .number:
            let d = document.double(at: at)
            guard d.rounded() == d, abs(d) < 9.2e18 else {
                throw RecordError("\(path)\(key): expected a whole number, found \(numberString(at))")
            }
            return Int64(d)
        default:
            throw RecordError("\(path)\(key): expected a whole number, found \(Self.typeName(document, at))")
        }
    }

    // MARK: Apple's signed schema

    /// A field that must be a JSON string (a number is not rendered as text here): `nil` when absent or
    /// `null`, an error naming the field for any other type. `prefix` starts the error (`schema: `).
    public func strictString(_ key: String, prefix: String = "") throws -> String? {
        guard let at = value(key) else { return nil }
        switch document.kind(at) {
        case .string, .escapedString: return document.string(at: at)
        default: throw RecordError("\(prefix)\(path)\(key): expected text, found \(Self.typeName(document, at))")
        }
    }

    /// A field of a signed payload that Apple always sends as a JSON string: a number (or anything else) is
    /// a `schema` error. `nil` when absent or `null`.
    public func schemaString(_ key: String) throws -> String? {
        try strictString(key, prefix: "schema: ")
    }

    /// A required string field of a signed payload (absent, `null` or empty is a `schema` error).
    public func requiredSchemaString(_ key: String) throws -> String {
        guard let text = try schemaString(key), !text.isEmpty else {
            throw RecordError("schema: \(path)\(key): missing")
        }
        return text
    }

    /// A field of a signed payload that Apple always sends as a JSON integer: text (`"1"`), a fraction or
    /// anything else is a `schema` error. `nil` when absent or `null`.
    public func schemaInteger(_ key: String) throws -> Int64? {
        guard let at = value(key) else { return nil }
        switch document.kind(at) {
        case .integer:
            return document.tape[at].integer
        case .number:
            throw RecordError("schema: \(path)\(key): expected a whole number, found \(numberString(at))")
        case .string, .escapedString:
            throw RecordError(
                "schema: \(path)\(key): expected a whole number, found \"\(document.string(at: at).prefix(40))\"")
        default:
            throw RecordError("schema: \(path)\(key): expected a whole number, found \(Self.typeName(document, at))")
        }
    }

    /// A field of a signed payload that Apple always sends as a JSON boolean: text (`"true"`), a number or
    /// anything else is a `schema` error. `nil` when absent or `null`.
    public func schemaBoolean(_ key: String) throws -> Bool? {
        guard let at = value(key) else { return nil }
        switch document.kind(at) {
        case .true: return true
        case .false: return false
        default:
            throw RecordError("schema: \(path)\(key): expected true or false, found \(Self.typeName(document, at))")
        }
    }

    /// A required integer field of a signed payload.
    public func requiredSchemaInteger(_ key: String) throws -> Int64 {
        guard let value = try schemaInteger(key) else { throw RecordError("schema: \(path)\(key): missing") }
        return value
    }

    /// Why the value of `key`, when it is a JSON number, cannot be an id: a fraction, or an integer beyond
    /// 2^53 (most JSON readers keep numbers as doubles, so its digits may already be lost). `nil` otherwise.
    func idNumberProblem(_ key: String) -> String? {
        guard let at = value(key) else { return nil }
        switch document.kind(at) {
        case .integer:
            let number = document.tape[at].integer
            guard number.magnitude > 1 << 53 else { return nil }
            return "\(key): the JSON number \(number) is beyond 2^53 (digits may be lost); export ids as strings"
        case .number:
            let text = document.numberText(at: at)
            if document.isIntegerLiteral(at: at) {
                return
                    "\(key): the JSON number \(text.prefix(40)) is beyond 2^53 (digits may be lost); export ids as strings"
            }
            return "\(key): the JSON number \(text.prefix(40)) is not an id"
        default:
            return nil
        }
    }

    /// A nested object.
    public func object(_ key: String) throws -> JSONObject? {
        guard let at = value(key) else { return nil }
        guard document.kind(at) == .object else {
            throw RecordError("\(path)\(key): expected an object, found \(Self.typeName(document, at))")
        }
        return JSONObject(document: document, index: at, path: "\(path)\(key).")
    }

    /// An array of objects.
    public func objects(_ key: String) throws -> [JSONObject] {
        guard let at = value(key) else { return [] }
        guard document.kind(at) == .array else {
            throw RecordError("\(path)\(key): expected an array, found \(Self.typeName(document, at))")
        }
        return try document.items(ofArray: at).enumerated().map { offset, item in
            guard document.kind(item) == .object else {
                throw RecordError(
                    "\(path)\(key)[\(offset)]: expected an object, found \(Self.typeName(document, item))")
            }
            return JSONObject(document: document, index: item, path: "\(path)\(key)[\(offset)].")
        }
    }

    /// A time: epoch milliseconds (number or numeric string) or an RFC 3339 string.
    public func time(_ key: String) throws -> Int64? {
        guard let at = value(key) else { return nil }
        switch document.kind(at) {
        case .string, .escapedString:
            if let ms = TimeParser.epochMillis(document.string(at: at)) { return ms }
            throw RecordError("\(path)\(key): expected epoch milliseconds or an RFC 3339 time")
        default:
            return try int64(at: at, key: key)
        }
    }

    /// The value of `key` as `"\(value)"` of the Foundation value rendered it (`0`/`1` for booleans,
    /// `<null>` for null), `nil` when the key is absent. For free-text details only.
    public func describedValue(_ key: String) -> String? {
        guard let at = document.member(key, inObject: index) else { return nil }
        switch document.kind(at) {
        case .string, .escapedString: return document.string(at: at)
        case .true: return "1"
        case .false: return "0"
        case .integer: return String(document.tape[at].integer)
        default: return "\(document.foundationValue(at: at))"
        }
    }

    /// JSONSerialization hands JSON `true`/`false` over as an NSNumber of type `c` (char) and never uses
    /// that type for a JSON number, so the type encoding alone tells them apart.
    static func isBoolean(_ n: NSNumber) -> Bool {
        n.objCType.pointee == CChar(UInt8(ascii: "c"))
    }
}
