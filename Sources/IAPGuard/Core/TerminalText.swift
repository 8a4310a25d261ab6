/// Text from inputs and the config made safe to print on a terminal or in a one-line log: control characters
/// (ESC, CR, LF, DEL, C1), format characters (bidi overrides, zero-width and byte order marks) and line
/// separators are written as `\u{1B}`, so an export cannot clear a screen, rewrite a line or hide text.
public enum TerminalText {
    /// `text` with every such character escaped; printable text (any script) is unchanged.
    public static func escaped(_ text: some StringProtocol) -> String {
        guard text.utf8.contains(where: { $0 < 0x20 || $0 >= 0x7F }) else { return String(text) }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if isInvisible(scalar) {
                out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Control, format and line- or paragraph-separator characters.
    public static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: return true
        default: return false
        }
    }
}
