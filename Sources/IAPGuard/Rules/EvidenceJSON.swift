import Foundation

/// The stored JSON of a finding's evidence rows and entity key (`evidence_json`, `entity_key`), written
/// without `JSONEncoder` on the common path: the bytes are exactly those of `JSONEncoder` with `.sortedKeys`
/// (keys `fields`, `kind` and `name`, `value`; a `nil` value left out; `/` written `\/`), which persisting
/// 100,000 findings spent most of its time in. Text that is not printable ASCII is handed to `JSONEncoder`
/// itself, so its escaping of control and non-ASCII characters is kept whatever it is.
struct EvidenceJSON {
    private let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    /// `[EvidenceRow]` as `JSONEncoder` (sorted keys) writes it.
    func encode(_ rows: [EvidenceRow]) throws -> String {
        var out: [UInt8] = []
        out.reserveCapacity(64 * rows.count + 2)
        out.append(UInt8(ascii: "["))
        for (index, row) in rows.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: #"{"fields":"#.utf8)
            try appendFields(row.fields, to: &out)
            out.append(contentsOf: #","kind":"#.utf8)
            try appendString(row.kind, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
        return String(decoding: out, as: UTF8.self)
    }

    /// `[EvidenceField]` as `JSONEncoder` (sorted keys) writes it.
    func encode(_ fields: [EvidenceField]) throws -> String {
        var out: [UInt8] = []
        out.reserveCapacity(48 * fields.count + 2)
        try appendFields(fields, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Stored `evidence_json` back as rows, read with the strict byte parser rather than `JSONDecoder`
    /// (an incremental run reads every standing finding it carries over). `nil` when the text is not JSON
    /// of that shape: callers then fall back to `JSONDecoder`, whose verdict stands.
    func decodeRows(_ text: String) -> [EvidenceRow]? {
        guard let document = try? JSONDocument.parse(Array(text.utf8)), document.kind(0) == .array else {
            return nil
        }
        var rows: [EvidenceRow] = []
        for item in document.items(ofArray: 0) {
            guard document.kind(item) == .object, let kind = string(document, document.member("kind", inObject: item)),
                let fieldsIndex = document.member("fields", inObject: item),
                let fields = fields(document, fieldsIndex)
            else { return nil }
            rows.append(EvidenceRow(kind: kind, fields: fields))
        }
        return rows
    }

    /// A stored entity key (`entity_key`) back as fields, like ``decodeRows(_:)``.
    func decodeFields(_ text: String) -> [EvidenceField]? {
        guard let document = try? JSONDocument.parse(Array(text.utf8)) else { return nil }
        return fields(document, 0)
    }

    /// The array of `{"name": …, "value": …}` objects at `index` (a missing or null value is nil).
    private func fields(_ document: JSONDocument, _ index: Int) -> [EvidenceField]? {
        guard document.kind(index) == .array else { return nil }
        var fields: [EvidenceField] = []
        for fieldIndex in document.items(ofArray: index) {
            guard document.kind(fieldIndex) == .object,
                let name = string(document, document.member("name", inObject: fieldIndex))
            else { return nil }
            var value: String?
            if let valueIndex = document.member("value", inObject: fieldIndex), document.kind(valueIndex) != .null {
                guard let text = string(document, valueIndex) else { return nil }
                value = text
            }
            fields.append(EvidenceField(name: name, value: value))
        }
        return fields
    }

    /// The string at `index`, or `nil` when there is none or it is not a string.
    private func string(_ document: JSONDocument, _ index: Int?) -> String? {
        guard let index else { return nil }
        switch document.kind(index) {
        case .string, .escapedString: return document.string(at: index)
        default: return nil
        }
    }

    private func appendFields(_ fields: [EvidenceField], to out: inout [UInt8]) throws {
        out.append(UInt8(ascii: "["))
        for (index, field) in fields.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: #"{"name":"#.utf8)
            try appendString(field.name, to: &out)
            if let value = field.value {
                out.append(contentsOf: #","value":"#.utf8)
                try appendString(value, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
    }

    private func appendString(_ text: String, to out: inout [UInt8]) throws {
        let utf8 = text.utf8
        guard utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else {
            out.append(contentsOf: try encoder.encode(text))
            return
        }
        out.append(UInt8(ascii: "\""))
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"):
                out.append(UInt8(ascii: "\\"))
                out.append(byte)
            default:
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
