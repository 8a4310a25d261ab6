import Foundation
import Logging

/// Fetches daily FX reference rates (units of a currency per 1 EUR) for the store's `fx_rates` table.
///
/// - the ECB's euro foreign exchange reference rates, as the `eurofxref` XML (daily, 90-day or full
///   history) or the ECB's wide CSV (`Date,USD,JPY,…`, `N/A` for missing values); there are no weekend or
///   holiday rates — the rules take the last rate on or before a date (``perEUR(in:currency:onOrBefore:)``);
/// - a second source in the snapshot's own `date,currency,per_eur` CSV shape for currencies the ECB does
///   not publish (ARS, EGP, PKR, NGN, …).
///
/// The configured `fx_rates` snapshot stays the offline default: fetched rates are merged over it, and when
/// a fetch fails the run goes on with the snapshot plus the rates fetched by earlier runs, with a warning.
public struct FXRateFetcher {
    /// The `source` label of ECB rates and of the second source in `fx_rates`.
    public static let ecbLabel = "ecb"
    public static let extraLabel = "fx-extra"

    public let config: FXFetchConfig
    public let http: ResilientHTTPClient
    public let logger: Logger

    public init(
        config: FXFetchConfig, logger: Logger, httpClient: any HTTPClient = URLSessionHTTPClient(followRedirects: true),
        sleep: @escaping @Sendable (TimeInterval) -> Void = { if $0 > 0 { Thread.sleep(forTimeInterval: $0) } }
    ) {
        self.config = config
        self.logger = logger
        self.http = ResilientHTTPClient(
            client: httpClient, policy: config.retry, timeout: config.timeoutSeconds, requestsPerSecond: 2,
            logger: logger, sleep: sleep)
    }

    /// What ``rates(snapshot:previous:)`` produced.
    public struct Result: Sendable {
        public var rates: [ReferenceData.FXRate]
        public var fetchedECB: Int = 0
        public var fetchedExtra: Int = 0
        /// Fetches that failed (the snapshot and earlier fetched rates were used instead).
        public var warnings: [String] = []
    }

    /// The snapshot, overlaid with rates fetched by earlier runs (`previous`, from the store), overlaid
    /// with what the configured URLs return now. Never throws: a failed fetch is a warning.
    public func rates(snapshot: [ReferenceData.FXRate], previous: [ReferenceData.FXRate]) -> Result {
        var merged: [String: ReferenceData.FXRate] = [:]
        func put(_ list: [ReferenceData.FXRate]) {
            for rate in list { merged["\(rate.currency)|\(rate.rateDate)"] = rate }
        }
        put(snapshot)
        put(previous.filter { $0.source == Self.ecbLabel || $0.source == Self.extraLabel })
        var result = Result(rates: [])
        if let url = config.ecbURL {
            do {
                let fresh = try Self.parseECB(try download(url), source: Self.ecbLabel)
                put(fresh)
                result.fetchedECB = fresh.count
            } catch {
                result.warnings.append("ECB rates from \(url.absoluteString): \(error)")
            }
        }
        if let url = config.extraURL {
            do {
                let fresh = try Self.parseLongCSV(try download(url), source: Self.extraLabel)
                put(fresh)
                result.fetchedExtra = fresh.count
            } catch {
                result.warnings.append("extra FX rates from \(url.absoluteString): \(error)")
            }
        }
        for warning in result.warnings {
            logger.warning("FX fetch failed; using the snapshot and earlier rates", metadata: ["error": "\(warning)"])
        }
        result.rates = merged.values.sorted { ($0.currency, $0.rateDate) < ($1.currency, $1.rateDate) }
        return result
    }

    /// Downloads `url`; a non-2xx status is an error.
    func download(_ url: URL) throws -> Data {
        let outcome = try http.send(
            { HTTPRequest(url: url, headers: ["User-Agent": "iapguard/\(IAPGuardInfo.version)"]) },
            classify: ResilientHTTPClient.defaultVerdict)
        guard (200..<300).contains(outcome.response.status) else {
            throw FXFormatError(message: "HTTP \(outcome.response.status)")
        }
        return outcome.response.body
    }

    /// The last rate of `currency` on or before `time` (epoch ms); EUR is 1.
    public static func perEUR(in rates: [ReferenceData.FXRate], currency: String, onOrBefore time: Int64) -> Double? {
        if currency == "EUR" { return 1 }
        return rates.filter { $0.currency == currency && $0.rateDate <= time }.max { $0.rateDate < $1.rateDate }?
            .perEUR
    }

    // MARK: - Formats

    /// Why fetched rates were rejected.
    public struct FXFormatError: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// Parses ECB rates: the `eurofxref` XML or the ECB wide CSV.
    public static func parseECB(_ data: Data, source: String) throws -> [ReferenceData.FXRate] {
        guard let text = String(data: data, encoding: .utf8) else { throw FXFormatError(message: "not UTF-8") }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("<") { return try parseECBXML(trimmed, source: source) }
        return try parseECBCSV(trimmed, source: source)
    }

    /// `<Cube time="2024-01-02"><Cube currency="USD" rate="1.0956"/>…</Cube>` inside a `gesmes:Envelope`.
    static func parseECBXML(_ text: String, source: String) throws -> [ReferenceData.FXRate] {
        guard text.hasSuffix("Envelope>") else {
            throw FXFormatError(message: "the XML does not end with its Envelope (truncated?)")
        }
        let tag = try NSRegularExpression(pattern: "<Cube\\b([^>]*)>")
        let attribute = try NSRegularExpression(pattern: "([A-Za-z]+)\\s*=\\s*[\"']([^\"']*)[\"']")
        let ns = text as NSString
        var day: Int64?
        var rates: [ReferenceData.FXRate] = []
        for match in tag.matches(in: text, range: NSRange(location: 0, length: ns.length)) {
            let attributesText = ns.substring(with: match.range(at: 1))
            var attributes: [String: String] = [:]
            let inner = attributesText as NSString
            for a in attribute.matches(in: attributesText, range: NSRange(location: 0, length: inner.length)) {
                attributes[inner.substring(with: a.range(at: 1))] = inner.substring(with: a.range(at: 2))
            }
            if let time = attributes["time"] {
                guard let parsed = TimeParser.rfc3339(time) else {
                    throw FXFormatError(message: "bad Cube time '\(time.prefix(20))'")
                }
                day = parsed
            } else if let currency = attributes["currency"], let rateText = attributes["rate"] {
                guard let day else { throw FXFormatError(message: "a rate outside a dated Cube") }
                rates.append(try rate(currency, rateText, day: day, source: source))
            }
        }
        guard !rates.isEmpty else { throw FXFormatError(message: "no rates in the XML") }
        return rates
    }

    /// `Date,USD,JPY,…` then one row per day; `N/A` and empty cells are skipped.
    static func parseECBCSV(_ text: String, source: String) throws -> [ReferenceData.FXRate] {
        let lines = text.split(whereSeparator: \.isNewline).map(String.init)
        guard let header = lines.first?.split(separator: ",", omittingEmptySubsequences: false).map(Self.cell) else {
            throw FXFormatError(message: "empty CSV")
        }
        if header.map({ $0.lowercased() }) == ["date", "currency", "per_eur"] {
            return try parseLongCSV(Data(text.utf8), source: source)
        }
        guard header.first?.lowercased() == "date", header.count > 1 else {
            throw FXFormatError(message: "expected the ECB CSV header Date,USD,… or date,currency,per_eur")
        }
        var rates: [ReferenceData.FXRate] = []
        for (number, line) in lines.enumerated().dropFirst() {
            let cells = line.split(separator: ",", omittingEmptySubsequences: false).map(Self.cell)
            guard let day = TimeParser.rfc3339(cells[0]) else {
                throw FXFormatError(message: "line \(number + 1): bad date '\(cells[0].prefix(20))'")
            }
            for (column, value) in zip(header.indices.dropFirst(), cells.dropFirst())
            where !header[column].isEmpty && !value.isEmpty && value.uppercased() != "N/A" {
                rates.append(try rate(header[column], value, day: day, source: source))
            }
        }
        guard !rates.isEmpty else { throw FXFormatError(message: "no rates in the CSV") }
        return rates
    }

    /// The snapshot's shape: `date,currency,per_eur`.
    public static func parseLongCSV(_ data: Data, source: String) throws -> [ReferenceData.FXRate] {
        guard let text = String(data: data, encoding: .utf8) else { throw FXFormatError(message: "not UTF-8") }
        let lines = text.split(whereSeparator: \.isNewline).map(String.init).filter {
            !$0.trimmingCharacters(in: .whitespaces).isEmpty
        }
        guard
            lines.first.map({ $0.split(separator: ",").map(Self.cell).map { $0.lowercased() } })
                == ["date", "currency", "per_eur"]
        else {
            throw FXFormatError(message: "expected the header date,currency,per_eur")
        }
        var rates: [ReferenceData.FXRate] = []
        for (number, line) in lines.enumerated().dropFirst() {
            let cells = line.split(separator: ",", omittingEmptySubsequences: false).map(Self.cell)
            guard cells.count == 3, let day = TimeParser.rfc3339(cells[0]) else {
                throw FXFormatError(message: "line \(number + 1): expected YYYY-MM-DD,CUR,rate")
            }
            rates.append(try rate(cells[1], cells[2], day: day, source: source))
        }
        guard !rates.isEmpty else { throw FXFormatError(message: "no rates in the CSV") }
        return rates
    }

    static func cell(_ raw: Substring) -> String {
        raw.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
    }

    static func rate(_ currency: String, _ text: String, day: Int64, source: String) throws -> ReferenceData.FXRate {
        let code = currency.trimmingCharacters(in: .whitespaces).uppercased()
        guard code.count == 3, code.allSatisfy({ $0.isASCII && $0.isLetter }) else {
            throw FXFormatError(message: "bad currency code '\(currency.prefix(10))'")
        }
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value > 0, value.isFinite else {
            throw FXFormatError(message: "bad rate '\(text.prefix(20))' for \(code)")
        }
        // The bounds a rate file is held to (``FXRateFile/plausibleRates``): a fetched rate is no more trusted.
        guard FXRateFile.plausibleRates.contains(value) else {
            throw FXFormatError(message: "\(code): \(FXRateFile.implausible(text))")
        }
        return ReferenceData.FXRate(currency: code, rateDate: day, perEUR: value, source: source)
    }
}
