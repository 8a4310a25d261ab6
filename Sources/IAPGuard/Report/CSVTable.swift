/// An RFC 4180 CSV document: CRLF line ends, a header row, every field quoted (`"` doubled), UTF-8 without BOM.
///
/// CSV injection (OWASP): a cell whose first character is `=`, `+`, `-`, `@`, tab, CR, LF or a full-width
/// `＝ ＋ － ＠` is prefixed with `'` so spreadsheets read it as text. Cells that are plain decimal numbers
/// (`-?[0-9]+(.[0-9]+)?`) are left alone: they cannot be formulas. This applies to every column, ids included.
public struct CSVTable: Sendable {
    public let header: [String]
    private var lines: [String] = []

    public init(header: [String]) {
        self.header = header
        lines.append(Self.line(header))
    }

    /// Appends a row; `nil` becomes an empty field.
    public mutating func append(_ row: [String?]) {
        precondition(row.count == header.count, "CSV row width \(row.count) != header width \(header.count)")
        lines.append(Self.line(row.map { $0 ?? "" }))
    }

    /// The document text.
    public var text: String { lines.joined() }

    /// The cell as written (before quoting): neutralised when it could start a formula.
    public static func neutralise(_ cell: String) -> String {
        guard let first = cell.unicodeScalars.first else { return cell }
        switch first {
        case "=", "+", "-", "@", "\t", "\r", "\n", "\u{FF1D}", "\u{FF0B}", "\u{FF0D}", "\u{FF20}":
            return isPlainNumber(cell) ? cell : "'" + cell
        default:
            return cell
        }
    }

    static func isPlainNumber(_ cell: String) -> Bool {
        var bytes = Substring(cell).utf8[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 1 || parts.count == 2 else { return false }
        return parts.allSatisfy { !$0.isEmpty && $0.allSatisfy { $0 >= 48 && $0 <= 57 } }
    }

    private static func line(_ cells: [String]) -> String {
        cells.map { "\"" + neutralise($0).replacingOccurrences(of: "\"", with: "\"\"") + "\"" }
            .joined(separator: ",") + "\r\n"
    }
}
