/// A rule query's result: one column list and each row's values in that order.
///
/// Kept this way rather than as a dictionary per row, which costs about three times the memory: a rule can
/// return hundreds of thousands of rows at scale. ``dictionary(at:)`` gives one row by column name.
struct ResultRows {
    /// The result's column names (the first row's; every row of one statement has the same).
    private(set) var columns: [String]
    var values: [[SQLValue]] = []

    init(columns: [String] = []) {
        self.columns = columns
    }

    var isEmpty: Bool { values.isEmpty }
    var count: Int { values.count }
    var indices: Range<Int> { values.indices }

    /// Appends one row as the store delivered it.
    mutating func append(columns rowColumns: [String], values row: [SQLValue]) {
        if values.isEmpty && columns.isEmpty { columns = rowColumns }
        values.append(row)
    }

    /// Where `column` is in each row (its last occurrence, as in ``dictionary(at:)``), or nil.
    func position(of column: String) -> Int? {
        columns.lastIndex(of: column)
    }

    /// Row `index` by column name; a column named twice keeps its last value, as a dictionary built
    /// column by column would.
    func dictionary(at index: Int) -> [String: SQLValue] {
        var row: [String: SQLValue] = [:]
        row.reserveCapacity(columns.count)
        for (column, value) in zip(columns, values[index]) { row[column] = value }
        return row
    }

    /// Row `index` by column name, its values released from here (the row reads as empty afterwards).
    mutating func take(at index: Int) -> [String: SQLValue] {
        let row = dictionary(at: index)
        values[index] = []
        return row
    }
}
