/// A field a backend record can carry: its position in the record's field list and its name.
protocol BackendField: CaseIterable, RawRepresentable where RawValue == Int {
    var name: String { get }
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
        for field in Field.allCases { values.append(try object.string(field.name)) }
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
