/// Turns untrusted text into HTML text content. Nothing from the data ever reaches markup any other way.
///
/// - `& < > " '` become entities, so the output is safe in text content and in quoted attributes.
/// - Bidi controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), other invisible format characters
///   (U+200B–U+200D, U+2060, U+FEFF) and C0/C1 controls other than tab and newline are replaced by a visible
///   marker such as `⟦U+202E⟧`, so a right-to-left override cannot disguise a value.
/// - Values longer than the cap are cut (by characters) and end in `… [N chars]` (the full value is in the CSV).
public enum HTMLText {
    /// Escapes `& < > " '` only (for text we generated ourselves, or already neutralised text).
    public static func escape(_ text: String) -> String {
        // Most report text (ids, amounts, dates) has nothing to escape.
        if !text.utf8.contains(where: isMarkup) { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Whether a UTF-8 byte is one of the characters ``escape(_:)`` replaces (`& < > " '`).
    static func isMarkup(_ byte: UInt8) -> Bool {
        byte == 0x26 || byte == 0x3C || byte == 0x3E || byte == 0x22 || byte == 0x27
    }

    /// Whether a scalar is shown as a visible `⟦U+XXXX⟧` marker instead of itself.
    public static func isNeutralised(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x0A: return false
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x061C, 0x200B...0x200F, 0x202A...0x202E, 0x2060, 0x2066...0x2069, 0xFEFF: return true
        case 0xFFF9...0xFFFB: return true
        default: return false
        }
    }

    /// Untrusted text as HTML: neutralised, capped at `maxCharacters` (nil: no cap), escaped, and wrapped in
    /// `<bdi>` so right-to-left text cannot reorder what surrounds it.
    public static func data(_ text: String, maxCharacters: Int? = nil) -> String {
        var value = text
        var truncatedNote = ""
        // A character is at least one UTF-8 byte: no need to count characters (grapheme breaking) when the
        // bytes fit.
        if let maxCharacters, value.utf8.count > maxCharacters, value.count > maxCharacters {
            value = String(value.prefix(maxCharacters))
            truncatedNote = "<span class=\"trunc\">… [" + String(text.count) + " chars]</span>"
        }
        // Printable ASCII without markup characters is already neutralised and escaped.
        if value.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && !isMarkup($0) }) {
            return "<bdi>" + value + "</bdi>" + truncatedNote
        }
        var out = ""
        var plain = ""
        for scalar in value.unicodeScalars {
            if isNeutralised(scalar) {
                out += escape(plain)
                plain = ""
                out += "<span class=\"ctl\">⟦U+" + hex(scalar.value) + "⟧</span>"
            } else {
                plain.unicodeScalars.append(scalar)
            }
        }
        out += escape(plain)
        return "<bdi>" + out + "</bdi>" + truncatedNote
    }

    /// Optional untrusted text; `nil` and empty become an em dash marked as missing.
    public static func optional(_ text: String?, maxCharacters: Int? = nil) -> String {
        guard let text, !text.isEmpty else { return "<span class=\"none\">—</span>" }
        return data(text, maxCharacters: maxCharacters)
    }

    /// A string safe for an `id` attribute and URL fragment: ASCII letters, digits and `-` kept, all else `_`.
    public static func anchor(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { scalar -> Unicode.Scalar in
                    let v = scalar.value
                    let ok = (v >= 48 && v <= 57) || (v >= 65 && v <= 90) || (v >= 97 && v <= 122) || v == 45
                    return ok ? scalar : "_"
                }))
    }

    private static func hex(_ value: UInt32) -> String {
        var text = String(value, radix: 16, uppercase: true)
        while text.count < 4 { text = "0" + text }
        return text
    }
}

extension HTMLText {
    /// Untrusted text for places where `<bdi>` and `<span>` cannot go (SVG `<text>`, `<title>`): controls become
    /// `⟦U+XXXX⟧` as plain text, the value is capped with `…` and escaped.
    public static func plain(_ text: String, maxCharacters: Int) -> String {
        var value = ""
        for scalar in text.unicodeScalars {
            if isNeutralised(scalar) {
                var hex = String(scalar.value, radix: 16, uppercase: true)
                while hex.count < 4 { hex = "0" + hex }
                value += "⟦U+" + hex + "⟧"
            } else {
                value.unicodeScalars.append(scalar)
            }
        }
        if value.count > maxCharacters { value = String(value.prefix(maxCharacters - 1)) + "…" }
        return escape(value)
    }
}
