/// A JSON value whose object keys keep their insertion order, serialised compactly and byte-for-byte
/// reproducibly (no key sorting surprises, no `\/` escaping). The generator writes every JSON record
/// through it.
enum WorldJSON: Sendable {
    case string(String)
    case int(Int64)
    case bool(Bool)
    case null
    case array([WorldJSON])
    case object([(String, WorldJSON)])

    /// An object from pairs, dropping pairs whose value is `nil`.
    static func obj(_ pairs: [(String, WorldJSON?)]) -> WorldJSON {
        .object(pairs.compactMap { key, value in value.map { (key, $0) } })
    }

    /// A string value, or `nil` for `nil`.
    static func str(_ s: String?) -> WorldJSON? { s.map { .string($0) } }

    /// An integer value, or `nil` for `nil`.
    static func num(_ n: Int64?) -> WorldJSON? { n.map { .int($0) } }

    /// The compact serialisation.
    var serialized: String {
        var out = ""
        write(into: &out)
        return out
    }

    func write(into out: inout String) {
        switch self {
        case .string(let s): WorldJSON.writeString(s, into: &out)
        case .int(let n): out += String(n)
        case .bool(let b): out += b ? "true" : "false"
        case .null: out += "null"
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                item.write(into: &out)
            }
            out += "]"
        case .object(let pairs):
            out += "{"
            for (i, pair) in pairs.enumerated() {
                if i > 0 { out += "," }
                WorldJSON.writeString(pair.0, into: &out)
                out += ":"
                pair.1.write(into: &out)
            }
            out += "}"
        }
    }

    static func writeString(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
