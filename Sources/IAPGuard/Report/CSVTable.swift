/// An RFC 4180 CSV document: CRLF line ends, a header row, every field quoted (`"` doubled), UTF-8 without BOM.
///
/// CSV injection (OWASP): a cell whose first character is `=`, `+`, `-`, `@`, tab, CR, LF or a full-width
/// `＝ ＋ － ＠` is prefixed with `'` so spreadsheets read it as text. Cells that are plain decimal numbers
/// (`-?[0-9]+(.[0-9]+)?`) are left alone: they cannot be formulas. This applies to every column, ids included.
public struct CSVTable: Sendable {
    public let header: [String]
    /// The UTF-8 bytes written and not yet taken (see ``takeBytes()``).
    private var bytes: [UInt8] = []

    public init(header: [String]) {
        self.header = header
        bytes.reserveCapacity(1 << 16)
        Self.appendLine(header, to: &bytes)
    }

    /// Appends a row; `nil` becomes an empty field.
    public mutating func append(_ row: [String?]) {
        precondition(row.count == header.count, "CSV row width \(row.count) != header width \(header.count)")
        Self.appendLine(row, to: &bytes)
    }

    /// The document text (what was not taken yet).
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// How many bytes are waiting to be taken.
    public var pendingByteCount: Int { bytes.count }

    /// Hands over the bytes written so far and goes on empty, so a large table can be streamed to a file.
    public mutating func takeBytes() -> [UInt8] {
        let taken = bytes
        bytes = []
        bytes.reserveCapacity(taken.count)
        return taken
    }

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

    /// Whether a cell starts like a formula (the byte-level twin of the check in ``neutralise(_:)``).
    static func startsLikeFormula(_ utf8: String.UTF8View) -> Bool {
        var iterator = utf8.makeIterator()
        guard let first = iterator.next() else { return false }
        switch first {
        case UInt8(ascii: "="), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "@"), 0x09, 0x0D, 0x0A:
            return true
        case 0xEF:
            // U+FF1D, U+FF0B, U+FF0D, U+FF20 are EF BC 9D, EF BC 8B, EF BC 8D, EF BC A0.
            guard iterator.next() == 0xBC, let third = iterator.next() else { return false }
            return third == 0x9D || third == 0x8B || third == 0x8D || third == 0xA0
        default:
            return false
        }
    }

    /// Appends one CSV line: every cell neutralised, quoted with `"` doubled, CRLF at the end.
    private static func appendLine<S: Sequence<String?>>(_ cells: S, to bytes: inout [UInt8]) {
        var firstCell = true
        for cell in cells {
            if !firstCell { bytes.append(UInt8(ascii: ",")) }
            firstCell = false
            bytes.append(UInt8(ascii: "\""))
            if let cell {
                let utf8 = cell.utf8
                if startsLikeFormula(utf8) && !isPlainNumber(cell) { bytes.append(UInt8(ascii: "'")) }
                if utf8.contains(UInt8(ascii: "\"")) {
                    for byte in utf8 {
                        bytes.append(byte)
                        if byte == UInt8(ascii: "\"") { bytes.append(byte) }
                    }
                } else {
                    bytes.append(contentsOf: utf8)
                }
            }
            bytes.append(UInt8(ascii: "\""))
        }
        bytes.append(0x0D)
        bytes.append(0x0A)
    }

    private static func appendLine(_ cells: [String], to bytes: inout [UInt8]) {
        appendLine(cells.lazy.map { Optional($0) }, to: &bytes)
    }
}
