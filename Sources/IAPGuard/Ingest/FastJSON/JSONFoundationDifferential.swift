import Foundation

/// Checks ``JSONDocument`` against `JSONSerialization` on one input: the differential oracle of the
/// tests and of the `FuzzJSONDocument` fuzz target.
///
/// The contract it checks:
/// - with ``JSONDocument/Options/foundationCompatible`` the parser accepts exactly what
///   `JSONSerialization` (`.fragmentsAllowed`) accepts, with equal values — except input that
///   `JSONSerialization` reads as UTF-16 or UTF-32 (a UTF-16/32 byte order mark, or a NUL among the first
///   four bytes), which the parser rejects (it reads UTF-8 only);
/// - strict mode accepts a subset of that, with the same values;
/// - the signed-data mode (``JSONDocument/Options/signed``) accepts exactly the Foundation-compatible
///   documents in which no object holds a key twice (checked here by comparing the decoded keys' UTF-8, not
///   by the parser's own check), with the same values;
/// - numbers compare as `Double` (relative difference below 1e-12: `JSONSerialization` reads long numbers
///   through `Decimal`), integers that fit in `Int64` exactly; booleans are never numbers.
public enum JSONFoundationDifferential {
    /// `nil` when the two parsers agree on `bytes`, else what differs.
    public static func mismatch(_ bytes: [UInt8]) -> String? {
        let foundation = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed])
        let compatible = try? JSONDocument.parse(bytes, options: .foundationCompatible)
        let strict = try? JSONDocument.parse(bytes, options: .strict)
        if let strict {
            guard let compatible, strict.tape == compatible.tape else {
                return "strict mode accepts what the Foundation-compatible mode rejects or reads differently"
            }
        }
        let signed = try? JSONDocument.parse(bytes, options: .signed)
        switch (compatible, signed) {
        case (let document?, let signed?):
            if hasDuplicateKey(document) { return "the signed mode accepts an object with a duplicate key" }
            if signed.tape != document.tape { return "the signed mode reads differently" }
        case (let document?, nil):
            if !hasDuplicateKey(document) { return "the signed mode rejects a document without duplicate keys" }
        case (nil, .some):
            return "the signed mode accepts what the Foundation-compatible mode rejects"
        case (nil, nil):
            break
        }
        switch (compatible, foundation) {
        case (let document?, let value?):
            return difference(document, 0, value, path: "$")
        case (.some, nil):
            return "JSONDocument accepts, JSONSerialization rejects"
        case (nil, .some):
            return readsAsUTF16or32(bytes) ? nil : "JSONSerialization accepts, JSONDocument rejects"
        case (nil, nil):
            return nil
        }
    }

    /// Whether any object of `document` holds the same (decoded) key twice.
    static func hasDuplicateKey(_ document: JSONDocument) -> Bool {
        for index in document.tape.indices where document.kind(index) == .object {
            let keys = document.members(ofObject: index).map { Array(document.string(at: $0.key).utf8) }
            if Set(keys).count != keys.count { return true }
        }
        return false
    }

    /// `text` without U+FEFF (which Foundation drops after an escape or at a string's start).
    static func withoutBOM(_ text: String) -> String {
        text.unicodeScalars.filter { $0.value != 0xFEFF }.map(String.init).joined()
    }

    /// Whether `JSONSerialization` would guess UTF-16 or UTF-32 for `bytes`.
    static func readsAsUTF16or32(_ bytes: [UInt8]) -> Bool {
        if bytes.starts(with: [0xFE, 0xFF]) || bytes.starts(with: [0xFF, 0xFE]) { return true }
        return bytes.prefix(4).contains(0)
    }

    static func difference(_ document: JSONDocument, _ index: Int, _ value: Any, path: String) -> String? {
        switch document.kind(index) {
        case .object:
            guard let map = value as? [String: Any] else { return "\(path): object vs \(type(of: value))" }
            var ours: [String: Int] = [:]
            for (key, member) in document.members(ofObject: index) { ours[document.string(at: key)] = member }
            var theirs = map
            if Set(ours.keys) != Set(map.keys) {
                // Foundation drops U+FEFF in keys as in values (see the string case): compare without it.
                var stripped: [String: Int] = [:]
                for (key, member) in ours { stripped[withoutBOM(key)] = member }
                theirs = [:]
                for (key, value) in map { theirs[withoutBOM(key)] = value }
                guard Set(stripped.keys) == Set(theirs.keys), stripped.count == ours.count else {
                    return "\(path): keys differ"
                }
                ours = stripped
            }
            for (key, member) in ours {
                if let problem = difference(document, member, theirs[key] ?? NSNull(), path: "\(path).\(key)") {
                    return problem
                }
            }
            return nil
        case .array:
            guard let list = value as? [Any] else { return "\(path): array vs \(type(of: value))" }
            let items = document.items(ofArray: index)
            guard items.count == list.count else { return "\(path): \(items.count) vs \(list.count) items" }
            for (offset, item) in items.enumerated() {
                if let problem = difference(document, item, list[offset], path: "\(path)[\(offset)]") { return problem }
            }
            return nil
        case .string, .escapedString:
            guard let text = value as? String else { return "\(path): string vs \(type(of: value))" }
            let ours = document.string(at: index)
            if Array(ours.utf8) == Array(text.utf8) { return nil }
            // Foundation drops a U+FEFF that starts a string or follows an escape (it decodes those pieces
            // like a whole text and strips the "byte order mark"); RFC 8259 keeps it, and so do we.
            if ours.unicodeScalars.contains(where: { $0.value == 0xFEFF }), withoutBOM(ours) == withoutBOM(text) {
                return nil
            }
            return "\(path): \"\(ours)\" vs \"\(text)\""
        case .true, .false:
            guard let number = value as? NSNumber, JSONObject.isBoolean(number) else {
                return "\(path): boolean vs \(type(of: value))"
            }
            return number.boolValue == (document.kind(index) == .true) ? nil : "\(path): booleans differ"
        case .null:
            return JSONObject.isNull(value) ? nil : "\(path): null vs \(type(of: value))"
        case .integer:
            guard let number = value as? NSNumber, !JSONObject.isBoolean(number) else {
                return "\(path): integer vs \(type(of: value))"
            }
            let ours = document.tape[index].integer
            return number.int64Value == ours ? nil : "\(path): \(ours) vs \(number)"
        case .number:
            guard let number = value as? NSNumber, !JSONObject.isBoolean(number) else {
                return "\(path): number vs \(type(of: value))"
            }
            let ours = document.double(at: index)
            let theirs = number.doubleValue
            if ours == theirs || (abs(ours) < 1e-300 && abs(theirs) < 1e-300) { return nil }
            let relative = abs(ours - theirs) / max(abs(ours), abs(theirs))
            return relative < 1e-12 ? nil : "\(path): \(ours) vs \(theirs)"
        }
    }
}
