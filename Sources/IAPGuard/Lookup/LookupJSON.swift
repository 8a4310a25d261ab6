import Foundation

/// The stable JSON encoding of a ``LookupResult``: snake_case keys (Apple's request bodies keep Apple's
/// camelCase keys), sorted keys, two-space pretty printing, unescaped slashes, a trailing newline.
public enum LookupJSON {
    /// The result as JSON text.
    public static func encode(_ result: LookupResult) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .custom { path in
            guard let last = path.last else { return AnyKey("") }
            let insideApple = path.dropLast().contains { ConsumptionDraft.appleKeyContainers.contains($0.stringValue) }
            if insideApple || last.intValue != nil { return last }
            return AnyKey(snakeCase(last.stringValue))
        }
        let data = try encoder.encode(result)
        return String(decoding: data, as: UTF8.self) + "\n"
    }

    /// One of Apple's request bodies as Apple expects it: Apple's camelCase keys, sorted, pretty printed.
    public static func appleBody<Body: Encodable>(_ body: Body) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(body), as: UTF8.self)
    }

    /// `transactionID` → `transaction_id`, `notificationUUID` → `notification_uuid`, `requestV1` → `request_v1`, `orderIDs` → `order_ids`.
    static func snakeCase(_ name: String) -> String {
        // A plural acronym stays one word: `orderIDs` → `order_ids`.
        let characters = Array(name.replacingOccurrences(of: "IDs", with: "Ids"))
        var out = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let nextIsLower = index + 1 < characters.count && characters[index + 1].isLowercase
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && nextIsLower) {
                    out.append("_")
                }
            }
            out.append(contentsOf: character.lowercased())
        }
        return out
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
