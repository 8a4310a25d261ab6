import Foundation
import Logging
import Testing

@testable import IAPGuard

@Suite("FX rate fetcher against a loopback ECB")
struct FXRateFetcherTests {
    static let xml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
          <gesmes:subject>Reference rates</gesmes:subject>
          <Cube>
            <Cube time="2026-11-20">
              <Cube currency="USD" rate="1.0412"/>
              <Cube currency="JPY" rate="161.23"/>
            </Cube>
            <Cube time='2026-11-19'>
              <Cube currency='USD' rate='1.0398'/>
            </Cube>
          </Cube>
        </gesmes:Envelope>
        """
    static let extra = "date,currency,per_eur\n2026-11-20,ARS,1050.5\n2026-11-20,NGN,1650\n"
    static let snapshot = [
        ReferenceData.FXRate(
            currency: "USD", rateDate: TimeParser.rfc3339("2026-11-19")!, perEUR: 9.99, source: "snap"),
        ReferenceData.FXRate(
            currency: "GBP", rateDate: TimeParser.rfc3339("2026-11-19")!, perEUR: 0.87, source: "snap"),
    ]

    static func fetcher(ecb: URL?, extra: URL?, logs: LogCapture = LogCapture()) -> FXRateFetcher {
        FXRateFetcher(
            config: FXFetchConfig(
                ecbURL: ecb, extraURL: extra, timeoutSeconds: 0.5,
                retry: RetryPolicy(maxAttempts: 3, baseDelay: 0.001, maxDelay: 0.002)),
            logger: Logger(label: "fx") { _ in CapturingLogHandler(capture: logs) }, sleep: { _ in })
    }

    @Test func fetchesECBAndExtraRatesOverTheSnapshot() throws {
        let server = try LoopbackHTTPServer { request in
            switch request.path {
            case "/eurofxref-hist-90d.xml": return .json(200, Self.xml)
            case "/extra.csv": return .json(200, Self.extra)
            default: return .json(404, "")
            }
        }
        defer { server.stop() }
        let result = Self.fetcher(
            ecb: server.baseURL.appendingPathComponent("eurofxref-hist-90d.xml"),
            extra: server.baseURL.appendingPathComponent("extra.csv")
        ).rates(snapshot: Self.snapshot, previous: [])
        #expect(result.warnings.isEmpty)
        #expect(result.fetchedECB == 3)
        #expect(result.fetchedExtra == 2)
        let friday = TimeParser.rfc3339("2026-11-20")!
        let sunday = TimeParser.rfc3339("2026-11-22T12:00:00Z")!
        // The fetched USD rate of the 19th replaces the snapshot's; GBP stays from the snapshot.
        #expect(FXRateFetcher.perEUR(in: result.rates, currency: "USD", onOrBefore: friday - 1) == 1.0398)
        #expect(FXRateFetcher.perEUR(in: result.rates, currency: "USD", onOrBefore: sunday) == 1.0412)
        #expect(FXRateFetcher.perEUR(in: result.rates, currency: "GBP", onOrBefore: sunday) == 0.87)
        #expect(FXRateFetcher.perEUR(in: result.rates, currency: "ARS", onOrBefore: sunday) == 1050.5)
        #expect(FXRateFetcher.perEUR(in: result.rates, currency: "EGP", onOrBefore: sunday) == nil)
        #expect(result.rates.first { $0.currency == "JPY" }?.source == FXRateFetcher.ecbLabel)
        #expect(result.rates.first { $0.currency == "ARS" }?.source == FXRateFetcher.extraLabel)
    }

    @Test func failuresFallBackToTheSnapshotAndEarlierRatesWithAWarning() throws {
        let server = try LoopbackHTTPServer { request in
            switch request.path {
            case "/truncated.xml":
                return .truncated(status: 200, body: Data(Self.xml.utf8), sent: 200)
            case "/cut.xml":
                return .json(200, String(Self.xml.prefix(300)))
            default: return .json(503, "")
            }
        }
        defer { server.stop() }
        let earlier = ReferenceData.FXRate(
            currency: "USD", rateDate: TimeParser.rfc3339("2026-11-18")!, perEUR: 1.05, source: FXRateFetcher.ecbLabel)
        for path in ["truncated.xml", "cut.xml", "down.xml"] {
            let logs = LogCapture()
            let result = Self.fetcher(ecb: server.baseURL.appendingPathComponent(path), extra: nil, logs: logs)
                .rates(snapshot: Self.snapshot, previous: [earlier])
            #expect(result.warnings.count == 1, "\(path)")
            #expect(result.fetchedECB == 0)
            #expect(Set(result.rates) == Set(Self.snapshot + [earlier]))
            #expect(logs.text.contains("FX fetch failed"))
        }
    }

    @Test func parsesTheECBWideCSV() throws {
        let csv = "Date,USD,JPY,ISK,\n2026-11-20,1.0412,161.23,N/A,\n2026-11-19,1.0398,160.9,150.1,\n"
        let rates = try FXRateFetcher.parseECB(Data(csv.utf8), source: "ecb")
        #expect(rates.count == 5)
        #expect(rates.contains { $0.currency == "ISK" && $0.perEUR == 150.1 })
        #expect(throws: FXRateFetcher.FXFormatError.self) {
            _ = try FXRateFetcher.parseECB(Data("Date,USD\n2026-11-20,-1\n".utf8), source: "ecb")
        }
        #expect(throws: FXRateFetcher.FXFormatError.self) {
            _ = try FXRateFetcher.parseLongCSV(Data("date,currency,per_eur\n2026-11-20,US$,1\n".utf8), source: "x")
        }
        // A rate outside any currency's range is refused, as in a rate file.
        #expect(throws: FXRateFetcher.FXFormatError.self) {
            _ = try FXRateFetcher.parseECB(Data("Date,USD\n2026-11-20,1e-300\n".utf8), source: "ecb")
        }
        #expect(throws: FXRateFetcher.FXFormatError.self) {
            _ = try FXRateFetcher.parseLongCSV(Data("date,currency,per_eur\n2026-11-20,USD,1e300\n".utf8), source: "x")
        }
    }
}
