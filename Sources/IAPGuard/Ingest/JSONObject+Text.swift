/// Compact JSON text of parsed values: what the store keeps of nested or unknown members of a signed
/// payload. Keys stay in document order, strings are re-escaped, numbers are written as they came.
extension JSONObject {
    /// The value of `key` as compact JSON text, or `nil` when it is absent or `null`.
    public func jsonText(_ key: String) -> String? {
        guard let at = value(key) else { return nil }
        var out: [UInt8] = []
        Self.writeText(document, at, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// The members whose keys are not in `known`, as one compact JSON object text; `nil` when there are none.
    public func unknownMembers(known: JSONKeySet) -> String? {
        var out: [UInt8] = []
        for (key, value) in document.members(ofObject: index, notIn: known) {
            out.append(out.isEmpty ? UInt8(ascii: "{") : UInt8(ascii: ","))
            JSONDocument.writeString(document.string(at: key), to: &out)
            out.append(UInt8(ascii: ":"))
            Self.writeText(document, value, to: &out)
        }
        guard !out.isEmpty else { return nil }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    /// The objects of the array at `key` (an empty list when absent or `null`); anything but an array of
    /// objects is a `schema` error naming the field.
    public func schemaObjects(_ key: String) throws -> [JSONObject] {
        do {
            return try objects(key)
        } catch let error as RecordError {
            throw RecordError("schema: " + error.message)
        }
    }

    /// The object at `key`, `nil` when absent or `null`; anything else is a `schema` error naming the field.
    public func schemaObject(_ key: String) throws -> JSONObject? {
        do {
            return try object(key)
        } catch let error as RecordError {
            throw RecordError("schema: " + error.message)
        }
    }

    /// Appends the value at tape index `at` of `document` to `out` as compact JSON text.
    static func writeText(_ document: JSONDocument, _ at: Int, to out: inout [UInt8]) {
        switch document.kind(at) {
        case .object:
            out.append(UInt8(ascii: "{"))
            for (offset, member) in document.members(ofObject: at).enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                JSONDocument.writeString(document.string(at: member.key), to: &out)
                out.append(UInt8(ascii: ":"))
                writeText(document, member.value, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        case .array:
            out.append(UInt8(ascii: "["))
            for (offset, item) in document.items(ofArray: at).enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                writeText(document, item, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .string, .escapedString:
            JSONDocument.writeString(document.string(at: at), to: &out)
        case .integer, .number:
            out += Array(document.numberText(at: at).utf8)
        case .true:
            out += Array("true".utf8)
        case .false:
            out += Array("false".utf8)
        case .null:
            out += Array("null".utf8)
        }
    }
}
