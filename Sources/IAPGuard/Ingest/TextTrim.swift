import Foundation

/// `trimmingCharacters(in: .whitespaces)` without the trip through `NSString`, and without the zero-width
/// space: tab, space, U+00A0, U+1680, U+2000–U+200A, U+202F, U+205F and U+3000 (not newlines) are trimmed from
/// both ends. Foundation's `CharacterSet.whitespaces` on Linux also holds U+200B, a format character (Cf), not
/// a space: an id that ends in one is a different id to the backend that wrote it, so it is kept for the id
/// checks to name (``BackendFieldValues``) instead of being trimmed into a look-alike of another id. Pinned
/// against Foundation for every other scalar by `JSONObjectAccessTests`.
enum TextTrim {
    /// Whether `scalar` is a space or tab trimmed from a field's ends.
    static func isWhitespace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09, 0x20, 0xA0, 0x1680, 0x2000...0x200A, 0x202F, 0x205F, 0x3000: return true
        default: return false
        }
    }

    /// Whether every character of `text` is an ASCII digit (`allSatisfy { $0.isASCII && $0.isNumber }`
    /// on the bytes; true for empty text, as that is).
    static func isASCIIDigits(_ text: String) -> Bool {
        text.utf8.allSatisfy { $0 &- UInt8(ascii: "0") < 10 }
    }

    /// `line.trimmingCharacters(in: .whitespacesAndNewlines)`, without the trip through `NSString` when
    /// the line starts and ends with printable ASCII (nothing to trim, the common case).
    static func whitespacesAndNewlines(_ line: Substring) -> String {
        if let first = line.utf8.first, let last = line.utf8.last, first > 0x20, first < 0x7F, last > 0x20,
            last < 0x7F
        {
            return String(line)
        }
        return line.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `text` without leading and trailing whitespace (tab and Zs).
    static func whitespaces(_ text: String) -> String {
        let utf8 = text.utf8
        guard let first = utf8.first, let last = utf8.last else { return text }
        // Printable ASCII at both ends (the common case): nothing to trim.
        if first > 0x20, first < 0x80, last > 0x20, last < 0x80 { return text }
        let scalars = text.unicodeScalars
        var start = scalars.startIndex
        var end = scalars.endIndex
        while start < end, isWhitespace(scalars[start]) { start = scalars.index(after: start) }
        while end > start, isWhitespace(scalars[scalars.index(before: end)]) { end = scalars.index(before: end) }
        if start == scalars.startIndex, end == scalars.endIndex { return text }
        return String(scalars[start..<end])
    }
}
