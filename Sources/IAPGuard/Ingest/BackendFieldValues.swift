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

    /// An id: its text, refused when a spreadsheet has turned it into a number (``isSpreadsheetNumber(_:)``).
    func id(_ field: Field) throws -> String? {
        guard let value = text(field) else { return nil }
        if Self.isSpreadsheetNumber(value) {
            throw RecordError(
                "\(field.name): \"\(value.prefix(40))\" is a number as a spreadsheet shows it (digits lost); "
                    + "export ids as text")
        }
        return value
    }

    /// Digits in scientific notation (`2.000001E+15`) or with a zero fraction (`2000000512345678.0`): what
    /// a spreadsheet writes back for a long numeric id, whose digits are then gone. Other text (including
    /// forged `com.urus.iap.…` ids, which rules look for) is not.
    static func isSpreadsheetNumber(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        var index = 0
        func digits() -> Int {
            let start = index
            while index < bytes.count, bytes[index] &- UInt8(ascii: "0") < 10 { index += 1 }
            return index - start
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") { index += 1 }
        guard digits() > 0 else { return false }
        var fraction: ArraySlice<UInt8> = []
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

    func time(_ field: Field) throws -> Int64? {
        guard let value = text(field) else { return nil }
        guard let ms = TimeParser.epochMillis(value) else {
            throw RecordError(
                "\(field.name): expected epoch milliseconds or an RFC 3339 time, found \"\(value.prefix(40))\"")
        }
        return ms
    }
}
