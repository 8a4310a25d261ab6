import Foundation

/// Reads ECB-style FX rate CSVs: `date,currency,per_eur` (units of the currency per 1 EUR).
public enum FXRateFile {
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
        var contents = Contents()
        var header: [String]?
        var failure: Error?
        let name = url.lastPathComponent
        // (currency, day) → (line, rate text, rate), the first row seen.
        var seen: [String: (line: Int, text: String, rate: Double)] = [:]
        var conflicted: Set<String> = []
        func bad(_ line: Int, _ reason: String, _ raw: [UInt8], lacking: String?) {
            contents.badRows.append(
                QuarantinedRecord(
                    sourceName: "fx_rates", location: "\(name):\(line)", reason: reason,
                    rawExcerpt: String(decoding: raw.prefix(4096), as: UTF8.self), rawHash: Hashing.sha256Hex(Data(raw))
                ))
            contents.lacking.append(lacking ?? "\(name):\(line)")
        }
        try CSVReader(url: url).forEachRecord { result in
            guard failure == nil else { return }
            switch result {
            case .failure(let error):
                guard header != nil else {
                    failure = SourceError(source: "fx_rates", message: "\(name):\(error.line): \(error.message)")
                    return
                }
                bad(error.line, error.message, error.raw, lacking: nil)
            case .success(let record):
                guard let columns = header else {
                    header = record.fields.map { $0.lowercased().trimmingCharacters(in: .whitespaces) }
                    if header != ["date", "currency", "per_eur"] {
                        failure = SourceError(
                            source: "fx_rates", message: "\(name):1: expected the header date,currency,per_eur")
                    }
                    return
                }
                let fields = record.fields.map { $0.trimmingCharacters(in: .whitespaces) }
                let raw = Array(record.fields.joined(separator: ",").utf8)
                let dayText = fields.first ?? ""
                let currency = fields.count > 1 ? fields[1].uppercased() : ""
                let known = TimeParser.rfc3339(dayText) != nil && Self.isCurrencyCode(currency)
                guard fields.count == columns.count, let day = TimeParser.rfc3339(dayText),
                    Self.isCurrencyCode(currency),
                    let rate = Double(fields[2]), rate.isFinite, rate > 0
                else {
                    bad(
                        record.line, "expected YYYY-MM-DD,CUR,rate", raw,
                        lacking: known ? "\(currency) on \(dayText)" : nil)
                    return
                }
                let key = "\(currency) on \(TimeParser.iso8601(day).prefix(10))"
                if let first = seen[key] {
                    if first.rate != rate, !conflicted.contains(key) {
                        conflicted.insert(key)
                        contents.conflicts.append(
                            "\(name):\(first.line) and :\(record.line) give \(key) two rates (\(first.text) and \(fields[2])); neither is used"
                        )
                        contents.lacking.append(key)
                    }
                    return
                }
                seen[key] = (record.line, fields[2], rate)
                contents.rates.append(
                    ReferenceData.FXRate(currency: currency, rateDate: day, perEUR: rate, source: source))
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
