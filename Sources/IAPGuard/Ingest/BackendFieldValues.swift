/// A field a backend record can carry: its position in the record's field list and its name.
protocol BackendField: CaseIterable, RawRepresentable where RawValue == Int {
    var name: String { get }
    /// Whether the field holds an id (checked for spreadsheet damage and unsafe JSON numbers).
    var isID: Bool { get }
}

/// The raw text of each field of one backend row, by position (nil when absent), with the conversions
/// that name the field in their errors.
struct BackendFieldValues<Field: BackendField> {
    private var values: [String?]

    init(_ row: [String: String]) {
        values = Field.allCases.map { row[$0.name] }
    }

    /// Reads the fields of a CSV record by position: `positions[field.rawValue]` is the field's column in
    /// `fields` (``positions(in:)``), so no field name → value dictionary is built per record.
    init(fields: [String], positions: [Int?]) {
        values = positions.map { position in position.map { fields[$0] } }
    }

    /// Where each field is among `columns` (a header's lower-cased names, each named at most once), by
    /// ``BackendField`` position; nil for a field the header lacks.
    static func positions(in columns: [String]) -> [Int?] {
        Field.allCases.map { field in columns.firstIndex(of: field.name) }
    }

    /// Reads the fields from `object` in field order, so the first field of the wrong type is the one named.
    init(_ object: JSONObject) throws {
        var values: [String?] = []
        values.reserveCapacity(Field.allCases.count)
        for field in Field.allCases {
            if field.isID, let problem = object.idNumberProblem(field.name) { throw RecordError(problem) }
            values.append(try object.string(field.name))
        }
        self.values = values
    }

    /// A NUL character in an id or any other field is never real data (and cuts C strings short in the
    /// tools that read the store): the record is rejected.
    func rejectNUL() throws {
        for field in Field.allCases where values[field.rawValue]?.utf8.contains(0) == true {
            throw RecordError("\(field.name): contains a NUL character")
        }
    }

    /// The field's text without surrounding whitespace; nil when absent or blank.
    func text(_ field: Field) -> String? {
        guard let raw = values[field.rawValue] else { return nil }
        let value = TextTrim.whitespaces(raw)
        guard !value.isEmpty else { return nil }
        return value
    }

    /// An id: its text, refused when a spreadsheet has turned it into a number (``isSpreadsheetNumber(_:)``)
    /// or when it holds an invisible character (``invisibleCharacter(in:)``).
    func id(_ field: Field) throws -> String? {
        guard let value = text(field) else { return nil }
        if let (scalar, position) = Self.invisibleCharacter(in: value) {
            throw RecordError(
                "\(field.name): contains the invisible character \(Self.describe(scalar)) at character \(position) "
                    + "(an id is printable text; it would not match the same id elsewhere)")
        }
        if Self.isSpreadsheetNumber(value) {
            throw RecordError(
                "\(field.name): \"\(value.prefix(40))\" is a number as a spreadsheet shows it (digits lost); "
                    + "export ids as text")
        }
        return value
    }

    /// An Apple transaction id as a backend keeps it: an ``id(_:)``, with the leading zeros of an all-digit id
    /// dropped. Apple's ids are decimal integers written without padding, so `00002016000000000002` (a
    /// fixed-width CHAR column's export) is transaction `2016000000000002`; kept padded, it joins no purchase.
    func transactionID(_ field: Field) throws -> String? {
        guard let value = try id(field) else { return nil }
        return AppleTransaction.unpaddedID(value)
    }

    /// The first control, format or line-separator character of `text` and its 1-based position: a byte order
    /// mark left mid-file by concatenated exports, a zero-width space, a bidi override, ESC or CR. Such an id
    /// looks like another one but never joins it, which made false findings.
    static func invisibleCharacter(in text: String) -> (Unicode.Scalar, Int)? {
        // Printable ASCII is the common case; only other bytes need the Unicode properties.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 >= 0x7F }) else { return nil }
        for (offset, scalar) in text.unicodeScalars.enumerated() where TerminalText.isInvisible(scalar) {
            return (scalar, offset + 1)
        }
        return nil
    }

    /// `U+FEFF (byte order mark)`: how an invisible character is named in a record error.
    static func describe(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        let names: [UInt32: String] = [
            0xFEFF: "byte order mark", 0x200B: "zero-width space", 0x200C: "zero-width non-joiner",
            0x200D: "zero-width joiner", 0x2060: "word joiner", 0x1B: "escape", 0x0D: "carriage return",
            0x0A: "line feed", 0x09: "tab", 0x202E: "right-to-left override", 0x00AD: "soft hyphen",
        ]
        return names[scalar.value].map { "\(code) (\($0))" } ?? code
    }

    /// Digits in scientific notation (`2.000001E+15`) or with a zero fraction (`2000000512345678.0`): what
    /// a spreadsheet writes back for a long numeric id, whose digits are then gone. Other text (including
    /// forged `com.urus.iap.…` ids, which rules look for) is not.
    static func isSpreadsheetNumber(_ text: String) -> Bool {
        // Read in place (an id is checked in every backend record; a copy of its bytes was an allocation).
        var text = text
        return text.withUTF8 { isSpreadsheetNumber(utf8: $0) }
    }

    private static func isSpreadsheetNumber(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        func digits() -> Int {
            let start = index
            while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10 { index += 1 }
            return index - start
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") { index += 1 }
        guard digits() > 0 else { return false }
        var fraction: Slice<UnsafeBufferPointer<UInt8>> = bytes[0..<0]
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: ",") {
            index += 1
            let start = index
            guard digits() > 0 else { return false }
            fraction = bytes[start..<index]
        }
        if index == bytes.count { return !fraction.isEmpty && fraction.allSatisfy { $0 == UInt8(ascii: "0") } }
        guard bytes[index] | 0x20 == UInt8(ascii: "e") else { return false }
        index += 1
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") { index += 1 }
        return digits() > 0 && index == bytes.count
    }

    /// A whole number that must be positive (a quantity or units).
    func positive(_ field: Field) throws -> Int64? {
        guard let value = try integer(field) else { return nil }
        guard value > 0 else { throw RecordError("\(field.name): \(value) is not a positive number") }
        return value
    }

    /// A price in milliunits: 0 or more (0 is what a free trial or a free offer code costs).
    func price(_ field: Field) throws -> Int64? {
        guard let value = try integer(field) else { return nil }
        guard value >= 0 else { throw RecordError(Self.negativePrice(field, "\(value)")) }
        return value
    }

    /// The error for a price below zero, `text` as the export wrote it.
    static func negativePrice(_ field: Field, _ text: some StringProtocol) -> String {
        "\(field.name): \(text.prefix(40)) is negative (a price is 0 or more; 0 for a free offer)"
    }

    func integer(_ field: Field) throws -> Int64? {
        guard let value = text(field) else { return nil }
        guard let i = Int64(value) else {
            throw RecordError("\(field.name): expected a whole number, found \"\(value.prefix(40))\"")
        }
        return i
    }

    /// A country or storefront: its ISO 3166-1 alpha-3 code (an alpha-2 code is mapped, as Apple's storefronts
    /// are alpha-3); anything else is refused, since a home of `AR` never equals a storefront of `ARG`.
    func country(_ field: Field) throws -> String? {
        guard let value = text(field) else { return nil }
        guard let code = CountryCode.alpha3(value.uppercased()) else {
            throw RecordError(
                "\(field.name): \"\(Self.printable(value.prefix(40)))\" is not an ISO 3166-1 country code "
                    + "(expected alpha-3 like USA, or alpha-2 like US)")
        }
        return code
    }

    /// `text` with control and format characters shown as `\u{…}`, for a record error that quotes input.
    static func printable(_ text: some StringProtocol) -> String {
        TerminalText.escaped(text)
    }

    func time(_ field: Field) throws -> Int64? {
        guard let value = text(field) else { return nil }
        guard let ms = TimeParser.epochMillis(value) else {
            throw RecordError(
                "\(field.name): expected epoch milliseconds or an RFC 3339 time, found \"\(value.prefix(40))\"")
        }
        guard ms <= Self.latestMillis else {
            throw RecordError("\(field.name): \(value.prefix(40)) is after the year 9999: not epoch milliseconds")
        }
        return ms
    }

    /// 9999-12-31T23:59:59.999Z, the last time RFC 3339 writes.
    static var latestMillis: Int64 { TimeParser.calendarMillis.upperBound }
}
