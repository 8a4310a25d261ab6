import Foundation

/// Reads ECB-style FX rate CSVs: `date,currency,per_eur` (units of the currency per 1 EUR).
public enum FXRateFile {
    /// Parses the file; a bad row is an error naming the line.
    public static func load(_ url: URL, source: String) throws -> [ReferenceData.FXRate] {
        var rates: [ReferenceData.FXRate] = []
        var header: [String]?
        var failure: Error?
        try CSVReader(url: url).forEachRecord { result in
            guard failure == nil else { return }
            switch result {
            case .failure(let error):
                failure = SourceError(
                    source: "fx_rates", message: "\(url.lastPathComponent):\(error.line): \(error.message)")
            case .success(let record):
                guard let columns = header else {
                    header = record.fields.map { $0.lowercased().trimmingCharacters(in: .whitespaces) }
                    if header != ["date", "currency", "per_eur"] {
                        failure = SourceError(
                            source: "fx_rates",
                            message: "\(url.lastPathComponent):1: expected the header date,currency,per_eur")
                    }
                    return
                }
                guard record.fields.count == columns.count,
                    let day = TimeParser.rfc3339(record.fields[0].trimmingCharacters(in: .whitespaces)),
                    Self.isCurrencyCode(record.fields[1].trimmingCharacters(in: .whitespaces).uppercased()),
                    let rate = Double(record.fields[2].trimmingCharacters(in: .whitespaces)), rate.isFinite, rate > 0
                else {
                    failure = SourceError(
                        source: "fx_rates",
                        message: "\(url.lastPathComponent):\(record.line): expected YYYY-MM-DD,CUR,rate")
                    return
                }
                rates.append(
                    ReferenceData.FXRate(
                        currency: record.fields[1].trimmingCharacters(in: .whitespaces).uppercased(), rateDate: day,
                        perEUR: rate, source: source))
            }
        }
        if let failure { throw failure }
        return rates
    }

    /// Three ASCII letters (ISO 4217 style).
    static func isCurrencyCode(_ text: String) -> Bool {
        text.utf8.count == 3 && text.utf8.allSatisfy { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
    }
}
