import Foundation

/// Typed, forgiving-where-Apple-is access to a decoded JSON object, with errors naming the field.
///
/// Apple's legacy responses send numbers as strings; both forms are accepted for numeric fields.
/// Anything else of the wrong type is a ``RecordError`` naming the key.
public struct JSONObject {
    public let values: [String: Any]
    /// A prefix for error messages (`in_app[2].`).
    public let path: String

    public init(_ values: [String: Any], path: String = "") {
        self.values = values
        self.path = path
    }

    /// Parses bytes into an object; the top level must be a JSON object.
    public static func parse<C: Collection>(_ bytes: C) throws -> JSONObject where C.Element == UInt8 {
        let data = Data(bytes)
        guard String(data: data, encoding: .utf8) != nil else {
            throw RecordError("invalid UTF-8")
        }
        let any: Any
        do {
            any = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw RecordError("malformed JSON (\(Self.describe(error)))")
        }
        guard let object = any as? [String: Any] else {
            throw RecordError("expected a JSON object, found \(Self.typeName(any))")
        }
        return JSONObject(object)
    }

    static func describe(_ error: Error) -> String {
        let ns = error as NSError
        if let detail = ns.userInfo["NSDebugDescription"] as? String { return detail }
        return ns.localizedDescription
    }

    /// Whether `value` is JSON `null`. Checked on the metatype: `value is NSNull` on a Swift dictionary or
    /// array bridges the whole container to Foundation first, which took ~40 % of parsing a receipt.
    static func isNull(_ value: Any) -> Bool {
        type(of: value) is NSNull.Type
    }

    static func typeName(_ value: Any) -> String {
        switch value {
        case is NSNull: return "null"
        case is String: return "text"
        case let n as NSNumber where isBoolean(n): return "a boolean"
        case is NSNumber: return "a number"
        case is [Any]: return "an array"
        case is [String: Any]: return "an object"
        default: return "\(type(of: value))"
        }
    }

    public func has(_ key: String) -> Bool {
        guard let value = values[key] else { return false }
        return !Self.isNull(value)
    }

    /// Text; numbers are accepted and rendered as integers when integral.
    public func string(_ key: String) throws -> String? {
        guard let value = values[key], !Self.isNull(value) else { return nil }
        if let s = value as? String { return s }
        if let n = value as? NSNumber, !Self.isBoolean(n) {
            let d = n.doubleValue
            if d.rounded() == d, abs(d) < 9.0e15 { return String(n.int64Value) }
            return n.stringValue
        }
        throw RecordError("\(path)\(key): expected text, found \(Self.typeName(value))")
    }

    public func requiredString(_ key: String) throws -> String {
        guard let s = try string(key), !s.isEmpty else { throw RecordError("\(path)\(key): missing") }
        return s
    }

    /// An integer; numeric strings (`"1596771003000"`) are accepted.
    public func int64(_ key: String) throws -> Int64? {
        guard let value = values[key], !Self.isNull(value) else { return nil }
        if let s = value as? String {
            let trimmed = s.trimmingCharacters(in: .whitespaces)
            if trimmed.isEmpty { return nil }
            guard let i = Int64(trimmed) else {
                throw RecordError("\(path)\(key): expected a whole number, found \"\(trimmed.prefix(40))\"")
            }
            return i
        }
        if let n = value as? NSNumber, !Self.isBoolean(n) {
            let d = n.doubleValue
            guard d.rounded() == d, abs(d) < 9.2e18 else {
                throw RecordError("\(path)\(key): expected a whole number, found \(n.stringValue)")
            }
            return n.int64Value
        }
        throw RecordError("\(path)\(key): expected a whole number, found \(Self.typeName(value))")
    }

    /// A nested object.
    public func object(_ key: String) throws -> JSONObject? {
        guard let value = values[key], !Self.isNull(value) else { return nil }
        guard let map = value as? [String: Any] else {
            throw RecordError("\(path)\(key): expected an object, found \(Self.typeName(value))")
        }
        return JSONObject(map, path: "\(path)\(key).")
    }

    /// An array of objects.
    public func objects(_ key: String) throws -> [JSONObject] {
        guard let value = values[key], !Self.isNull(value) else { return [] }
        guard let list = value as? [Any] else {
            throw RecordError("\(path)\(key): expected an array, found \(Self.typeName(value))")
        }
        return try list.enumerated().map { index, item in
            guard let map = item as? [String: Any] else {
                throw RecordError("\(path)\(key)[\(index)]: expected an object, found \(Self.typeName(item))")
            }
            return JSONObject(map, path: "\(path)\(key)[\(index)].")
        }
    }

    /// A time: epoch milliseconds (number or numeric string) or an RFC 3339 string.
    public func time(_ key: String) throws -> Int64? {
        guard let value = values[key], !Self.isNull(value) else { return nil }
        if let s = value as? String, let ms = TimeParser.epochMillis(s) { return ms }
        if value is String {
            throw RecordError("\(path)\(key): expected epoch milliseconds or an RFC 3339 time")
        }
        return try int64(key)
    }

    /// JSONSerialization hands JSON `true`/`false` over as an NSNumber of type `c` (char) and never uses
    /// that type for a JSON number, so the type encoding alone tells them apart.
    static func isBoolean(_ n: NSNumber) -> Bool {
        n.objCType.pointee == CChar(UInt8(ascii: "c"))
    }
}
