import Foundation
import Testing

@testable import IAPGuard

/// The FX snapshot replaces every stored rate: a file that gives no rate, mostly bad rows, or cannot be read
/// as CSV text stops the run (exit 65, as a bad header always did) naming the file; a folder is a bad config.
@Suite struct FXSnapshotFailureTests {
    static let header = "date,currency,per_eur\n"

    /// A world with one good order source and `rates` as its FX file; the run's error, if any.
    static func runError(rates: [UInt8]) throws -> String? {
        let world = try IngestTestWorld()
        try world.write("orders.csv", "order_id,user_id,created_at\no-1,u-1,1767225600000\n")
        try world.write("rates.csv", bytes: rates)
        let config = try world.config(sources: ["{name: orders, kind: orders, format: csv, path: data/orders.csv}"])
        let yaml = try String(contentsOf: config.file, encoding: .utf8)
        try Data(("fx_rates: data/rates.csv\n" + yaml).utf8).write(to: config.file)
        do {
            _ = try world.run(try Config.load(from: config.file))
            return nil
        } catch let error as SourceError {
            #expect(RunExitCode(error: error) == .badInput)
            return error.description
        }
    }

    @Test(arguments: [
        ("", "source fx_rates: rates.csv: the file is empty (no header, no rate)"),
        (header, "source fx_rates: rates.csv: the header has no row after it (no rate)"),
        (String(header.dropLast()), "source fx_rates: rates.csv: the header has no row after it"),
        (
            header + "2026-01-01,USD,x\n2026-01-02,USD,y\n2026-01-03,USD,1.1\n",
            #"source fx_rates: 2 of 3 rows (67 %) of rates.csv are bad, above the 50 % limit (first: rates.csv:2: per_eur: expected a positive rate, found "x")"#
        ),
    ])
    func anFXFileWithoutRatesOrWithMostlyBadRowsStopsTheRunNamingIt(text: String, expected: String) throws {
        let error = try Self.runError(rates: Array(text.utf8))
        #expect(error?.hasPrefix(expected) == true, "\(error ?? "no error")")
    }

    @Test func compressedOrUTF16FXFilesAreNamedAsSuch() throws {
        let gzip = try Self.runError(rates: [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x00])
        #expect(gzip == "source fx_rates: rates.csv: the file is gzip-compressed; it must be uncompressed UTF-8 text")
        let utf16 = try Self.runError(rates: [0xFF, 0xFE] + Array(Self.header.utf8).flatMap { [$0, 0] })
        #expect(
            utf16 == "source fx_rates: rates.csv: the file is UTF-16 (little-endian byte order mark); it must be UTF-8")
    }

    @Test func oneBadRowInThreeIsStillAWarning() throws {
        #expect(try Self.runError(rates: Array((Self.header + "2026-01-01,USD,1.1\n2026-01-02,US,1\n").utf8)) == nil)
    }

    @Test func anFXPathThatIsAFolderIsABadConfigNamingTheKeyAndPath() throws {
        let world = try IngestTestWorld()
        try FileManager.default.createDirectory(
            at: world.directory.appendingPathComponent("data/rates"), withIntermediateDirectories: true)
        let config = try world.config(sources: ["{name: orders, kind: orders, format: csv, path: data/orders.csv}"])
        let yaml = try String(contentsOf: config.file, encoding: .utf8)
        try Data(("fx_rates: data/rates\n" + yaml).utf8).write(to: config.file)
        let error = try #require(throws: ConfigError.self) { try Config.load(from: config.file) }
        #expect(error.key == "fx_rates" && error.line == 1)
        #expect(error.message.hasSuffix("data/rates is a folder; fx_rates names one CSV file"), "\(error)")
    }

    @Test func aLongLayoutRowErrorNamesTheFieldAndEscapesItsText() throws {
        let url = TestScratch.root.appendingPathComponent("fx-\(UUID().uuidString).csv")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data((Self.header + "2026-01-01,U\u{1B}D,1\n26/08/2026,USD,1\n2026-01-01,USD,1.1\n").utf8).write(to: url)
        let reasons = try FXRateFile.read(url, source: "t").badRows.map(\.reason)
        #expect(
            reasons == [
                #"currency: expected a 3-letter ISO 4217 code, found "U\u{1B}D""#,
                #"date: expected YYYY-MM-DD, found "26/08/2026""#,
            ])
    }
}
