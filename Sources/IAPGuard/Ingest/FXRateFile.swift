import Foundation

/// Reads FX rate CSVs in units of the currency per 1 EUR, in either layout (told apart by the header):
/// - long: `date,currency,per_eur`, one rate per row;
/// - wide, the ECB's own `eurofxref-hist.csv` as downloaded: `Date,USD,JPY,…`, one day per row and one
///   currency per column, newest first, `N/A` (or an empty cell) where the ECB has no rate, and the trailing
///   comma the ECB puts at the end of every line.
public enum FXRateFile {
    /// The two layouts.
    enum Layout: Equatable {
        case long
        /// The currency of each column after the date (`nil` for the empty column a trailing comma makes).
        case wide([String?])
    }

    /// The layout a header announces, or `nil` when it is neither.
    static func layout(of header: [String]) -> Layout? {
        if header == ["date", "currency", "per_eur"] { return .long }
        guard header.first == "date", header.count > 1 else { return nil }
        var columns: [String?] = header.dropFirst().map { $0.isEmpty ? nil : $0.uppercased() }
        while columns.last == .some(nil) { columns.removeLast() }
        guard !columns.isEmpty, columns.allSatisfy({ $0.map(isCurrencyCode) ?? false }) else { return nil }
        return .wide(columns)
    }

    /// What ``read(_:source:)`` found: the usable rates, the rows it could not use and the conflicts.
    public struct Contents: Sendable {
        /// The rates to load (a conflicting currency and day is left out).
        public var rates: [ReferenceData.FXRate] = []
        /// Rows that cannot be read, as quarantine records (`source` `fx_rates`, `file:line`).
        public var badRows: [QuarantinedRecord] = []
        /// Two rows for the same currency and day with different rates, each naming both lines.
        public var conflicts: [String] = []
        /// `CUR on YYYY-MM-DD` (or the line, when the row is unreadable) for every rate that is missing
        /// because its row was bad or in conflict.
        public var lacking: [String] = []
        /// The records after the header, good and bad.
        public var rows = 0
    }

    /// Parses the file; a bad row is an error naming the line (the strict form of ``read(_:source:)``).
    public static func load(_ url: URL, source: String) throws -> [ReferenceData.FXRate] {
        let contents = try read(url, source: source)
        if let bad = contents.badRows.first {
            throw SourceError(source: "fx_rates", message: "\(bad.location): \(bad.reason)")
        }
        if let conflict = contents.conflicts.first { throw SourceError(source: "fx_rates", message: conflict) }
        return contents.rates
    }

    /// Reads the file. A wrong header (or an unreadable file) throws; a bad row is kept aside with its line
    /// and the rest is read; two different rates for one currency and day are a conflict naming both lines
    /// (neither rate is used). The same rate twice is one rate.
    public static func read(_ url: URL, source: String) throws -> Contents {
        try checkReadable(url)
        return try readRows(url, source: source)
    }

    /// Reads the configured snapshot (``read(_:source:)``) for a run. The file replaces every stored rate, so
    /// one that gives no rate (empty, header only) or mostly bad rows (more than half, as a source's default
    /// `max_bad_share`) throws too: loaded, it would quietly leave IAP-008 without the rates it compares.
    public static func readSnapshot(_ url: URL, source: String) throws -> Contents {
        let name = url.lastPathComponent
        let contents = try read(url, source: source)
        if contents.rows == 0 {
            let size = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? Int
            throw SourceError(
                source: "fx_rates",
                message: size == 0
                    ? "\(name): the file is empty (no header, no rate); every FX rate would be gone"
                    : "\(name): the header has no row after it (no rate); every FX rate would be gone")
        }
        let bad = contents.badRows.count
        if bad * 2 > contents.rows, let first = contents.badRows.first {
            let percent = Int((Double(bad) * 100 / Double(contents.rows)).rounded())
            throw SourceError(
                source: "fx_rates",
                message:
                    "\(bad) of \(contents.rows) rows (\(percent) %) of \(name) are bad, above the 50 % limit "
                    + "(first: \(first.location): \(first.reason))")
        }
        return contents
    }

    /// Refuses what cannot be read as CSV text before reading it, naming the file: a folder, a compressed or
    /// UTF-16 file (read as text, each would be a row of binary, `NUL byte in field 1`).
    /// Rates per EUR that a currency can have. The ECB's range is about 0.3 (KWD) to about 30,000 (VND);
    /// a rate far outside it is a typo or a unit error, and used it would turn an ordinary price into an
    /// astronomical one (1e-300 USD per EUR makes every USD price overflow) or into nothing.
    static let plausibleRates: ClosedRange<Double> = 1e-6...1e9

    /// The reason for a rate outside ``plausibleRates``, quoting `text`.
    static func implausible(_ text: String) -> String {
        "\"\(text.prefix(40))\" is outside any currency's plausible rate (0.000001 to 1000000000 per EUR)"
    }

    static func checkReadable(_ url: URL) throws {
        let name = url.lastPathComponent
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder) else {
            throw SourceError(source: "fx_rates", message: "\(url.path): no such file")
        }
        guard !isFolder.boolValue else {
            throw SourceError(source: "fx_rates", message: "\(url.path) is a folder; fx_rates names one CSV file")
        }
        do {
            if let encoding = try SourceIngestor.utf16Encoding(of: url) {
                throw SourceError(
                    source: "fx_rates",
                    message: "\(name): the file is UTF-16 (\(encoding) byte order mark); it must be UTF-8")
            }
            if let compression = try SourceIngestor.compression(of: url) {
                throw SourceError(
                    source: "fx_rates",
                    message: "\(name): the file is \(compression)-compressed; it must be uncompressed UTF-8 text")
            }
        } catch let error as SourceError {
            throw error
        } catch {
            throw SourceError(
                source: "fx_rates", message: "\(url.path): cannot read the file (\(error.localizedDescription))")
        }
    }

    /// Reads the rows (the file was checked by ``checkReadable(_:)``).
    static func readRows(_ url: URL, source: String) throws -> Contents {
        var contents = Contents()
        var header: [String]?
        var failure: Error?
        let name = url.lastPathComponent
        // (currency, day) → (line, rate text, rate), the first row seen.
        var seen: [String: (line: Int, text: String, rate: Double)] = [:]
        var conflicted: Set<String> = []
        var layout: Layout?
        func bad(_ line: Int, _ reason: String, _ raw: [UInt8], lacking: String?) {
            contents.badRows.append(
                QuarantinedRecord(
                    sourceName: "fx_rates", location: "\(name):\(line)", reason: reason,
                    rawExcerpt: String(decoding: raw.prefix(4096), as: UTF8.self), rawHash: Hashing.sha256Hex(Data(raw))
                ))
            contents.lacking.append(lacking ?? "\(name):\(line)")
        }
        /// Takes one rate; a second, different rate for the same currency and day is a conflict.
        func accept(_ currency: String, _ day: Int64, _ text: String, _ rate: Double, line: Int) {
            let key = "\(currency) on \(TimeParser.iso8601(day).prefix(10))"
            if let first = seen[key] {
                if first.rate != rate, !conflicted.contains(key) {
                    conflicted.insert(key)
                    contents.conflicts.append(
                        "\(name):\(first.line) and :\(line) give \(key) two rates (\(first.text) and \(text)); neither is used"
                    )
                    contents.lacking.append(key)
                }
                return
            }
            seen[key] = (line, text, rate)
            contents.rates.append(ReferenceData.FXRate(currency: currency, rateDate: day, perEUR: rate, source: source))
        }
        try CSVReader(url: url).forEachRecord { result in
            guard failure == nil else { return }
            if header != nil { contents.rows += 1 }
            switch result {
            case .failure(let error):
                guard header != nil else {
                    failure = SourceError(source: "fx_rates", message: "\(name):\(error.line): \(error.message)")
                    return
                }
                bad(error.line, error.message, error.raw, lacking: nil)
            case .success(let record):
                guard let columns = header else {
                    let names = record.fields.map { $0.lowercased().trimmingCharacters(in: .whitespaces) }
                    header = names
                    layout = Self.layout(of: names)
                    if layout == nil {
                        failure = SourceError(
                            source: "fx_rates",
                            message:
                                "\(name):1: expected the header date,currency,per_eur or the ECB's Date,USD,JPY,… layout"
                        )
                    }
                    return
                }
                let fields = record.fields.map { $0.trimmingCharacters(in: .whitespaces) }
                let raw = Array(record.fields.joined(separator: ",").utf8)
                if case .wide(let currencies) = layout {
                    let dayText = fields.first ?? ""
                    // Cells past the last currency may only be the empty ones a trailing comma leaves.
                    guard fields.count > currencies.count, fields.dropFirst(currencies.count + 1).allSatisfy(\.isEmpty),
                        let day = TimeParser.rfc3339(dayText)
                    else {
                        bad(
                            record.line, "expected YYYY-MM-DD and one rate (or N/A) per currency of the header", raw,
                            lacking: nil)
                        return
                    }
                    // The good cells of a row are used; the row is quarantined once, naming each bad cell.
                    var problems: [String] = []
                    var lacking: [String] = []
                    for (index, currency) in currencies.enumerated() {
                        guard let currency else { continue }
                        let cell = fields[index + 1]
                        if cell.isEmpty || cell.uppercased() == "N/A" { continue }
                        guard let rate = Double(cell), rate.isFinite, rate > 0 else {
                            problems.append(
                                "\(currency): expected a positive rate or N/A, found \"\(cell.prefix(40))\"")
                            lacking.append("\(currency) on \(dayText)")
                            continue
                        }
                        guard Self.plausibleRates.contains(rate) else {
                            problems.append("\(currency): \(Self.implausible(cell))")
                            lacking.append("\(currency) on \(dayText)")
                            continue
                        }
                        accept(currency, day, cell, rate, line: record.line)
                    }
                    if !problems.isEmpty {
                        bad(record.line, problems.joined(separator: "; "), raw, lacking: lacking.first)
                        contents.lacking += lacking.dropFirst()
                    }
                    return
                }
                let dayText = fields.first ?? ""
                let currency = fields.count > 1 ? fields[1].uppercased() : ""
                let known = TimeParser.rfc3339(dayText) != nil && Self.isCurrencyCode(currency)
                let lacking = known ? "\(currency) on \(dayText)" : nil
                // The reason names the field at fault and quotes it (control characters escaped).
                func quoted(_ text: String) -> String {
                    "\"" + BackendFieldValues<BackendRowMapper.UserField>.printable(text.prefix(40)) + "\""
                }
                guard fields.count == columns.count else {
                    bad(
                        record.line, "expected 3 fields (date,currency,per_eur), found \(fields.count)", raw,
                        lacking: lacking)
                    return
                }
                guard let day = TimeParser.rfc3339(dayText) else {
                    bad(record.line, "date: expected YYYY-MM-DD, found \(quoted(dayText))", raw, lacking: nil)
                    return
                }
                guard Self.isCurrencyCode(currency) else {
                    bad(
                        record.line, "currency: expected a 3-letter ISO 4217 code, found \(quoted(fields[1]))", raw,
                        lacking: nil)
                    return
                }
                guard let rate = Double(fields[2]), rate.isFinite, rate > 0 else {
                    bad(
                        record.line, "per_eur: expected a positive rate, found \(quoted(fields[2]))", raw,
                        lacking: lacking)
                    return
                }
                guard Self.plausibleRates.contains(rate) else {
                    bad(record.line, "per_eur: \(Self.implausible(fields[2]))", raw, lacking: lacking)
                    return
                }
                accept(currency, day, fields[2], rate, line: record.line)
            }
        }
        if let failure { throw failure }
        if !conflicted.isEmpty {
            contents.rates.removeAll { rate in
                conflicted.contains("\(rate.currency) on \(TimeParser.iso8601(rate.rateDate).prefix(10))")
            }
        }
        return contents
    }

    /// Three ASCII letters (ISO 4217 style).
    static func isCurrencyCode(_ text: String) -> Bool {
        text.utf8.count == 3 && text.utf8.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
    }
}
