import Foundation
import Testing

@testable import IAPGuard

/// Every case of the malformed-input corpus gives a clear error naming the file and line (or record),
/// nothing crashes, the good records around a bad one are stored, and bad records are kept in
/// quarantine with their reason.
@Suite struct MalformedCorpusTests {
    @Test func theCorpusHasAtLeast200CasesAcrossEveryFormat() {
        #expect(MalformedCorpus.all.count >= 200)
        let formats = Set(MalformedCorpus.all.map(\.format))
        for format in [
            "receipts", "signed", "notifications", "credits", "orders-jsonl", "orders-csv", "credits-csv",
            "orders-csv-file", "fx", "config", "rules", "trust", "sqlite", "sqlite-raw", "source-orders-jsonl",
            "source-orders-csv", "source-credits-csv",
        ] {
            #expect(formats.contains(format), "no corpus case for \(format)")
        }
        for item in MalformedCorpus.all {
            #expect(FileManager.default.fileExists(atPath: item.url.path), "missing corpus file \(item.file)")
        }
    }

    /// A bad record between two good ones: it is quarantined (or kept as a failed sighting) at line 2 with
    /// its reason, and both good records are stored.
    @Test(
        arguments: MalformedCorpus.cases(
            "receipts", "signed", "notifications", "credits", "orders-jsonl", "orders-csv", "credits-csv"))
    func aBadRecordBetweenGoodOnesIsQuarantinedAndTheGoodOnesAreStored(_ item: MalformedCorpus.Case) throws {
        let good = try MalformedCorpus.goodRecords(item.format)
        var bad = try Array(Data(contentsOf: item.url))
        if bad.last == UInt8(ascii: "\n") { bad.removeLast() }
        var bytes: [UInt8] = []
        if let header = good.header { bytes += Array((header + "\n").utf8) }
        let firstLine = good.header == nil ? 1 : 2
        bytes += Array((good.records[0] + "\n").utf8) + bad + [UInt8(ascii: "\n")]
        bytes += Array((good.records[1] + "\n").utf8)
        let ingest = try CorpusIngest(format: item.format, bytes: bytes)
        defer { ingest.remove() }
        let location = "input.\(MalformedCorpus.source(item.format).format):\(firstLine + 1)"

        #expect(ingest.sourceError == nil, "\(item.file): \(String(describing: ingest.sourceError))")
        #expect(try ingest.count(good.check) == 2, "\(item.file): the good records around the bad one were not stored")
        let quarantine = try ingest.quarantine()
        switch item.expect {
        case "quarantine":
            let reasons = quarantine.filter { $0.location == location }.map(\.reason)
            #expect(reasons.count == 1, "\(item.file): expected one quarantined record at \(location): \(quarantine)")
            // The bad record itself is kept (its start), not only the reason.
            let excerpt = quarantine.first { $0.location == location }?.excerpt ?? ""
            #expect(!excerpt.isEmpty || bad.isEmpty, "\(item.file): the quarantine kept no excerpt")
            #expect(excerpt.utf8.count <= 4096 * 3, "\(item.file)")
            #expect(
                reasons.first?.contains(item.reason) == true,
                "\(item.file): reason \(reasons) does not contain \"\(item.reason)\"")
            #expect(quarantine.count == 1, "\(item.file): \(quarantine)")
        case "failed":
            let view = item.format == "notifications" ? "notifications" : "sightings"
            let rows = try ingest.store.database.query(
                "SELECT verification, verification_reason, verification_detail FROM \(view) WHERE source_ref = ?",
                [.text(location)])
            #expect(rows.count == 1, "\(item.file): expected one \(view) row at \(location)")
            let text = rows.first.map { "\($0[1].textValue ?? ""): \($0[2].textValue ?? "")" } ?? ""
            #expect(rows.first?[0].textValue == "failed", "\(item.file)")
            #expect(text.contains(item.reason), "\(item.file): \"\(text)\" does not contain \"\(item.reason)\"")
            #expect(quarantine.isEmpty, "\(item.file): \(quarantine)")
        case let expect where expect.hasPrefix("ok:"):
            let view = MalformedCorpus.source(item.format).view
            #expect(quarantine.isEmpty, "\(item.file): \(quarantine)")
            #expect(try ingest.count("SELECT COUNT(*) FROM \(view)") == Int64(expect.dropFirst(3)), "\(item.file)")
        default:
            Issue.record("\(item.file): unknown expectation \(item.expect)")
        }
    }

    /// Whole files (CSV with a BOM, CR-only line ends, a bad header) and SQLite source databases.
    @Test(arguments: MalformedCorpus.cases("orders-csv-file", "sqlite", "sqlite-raw"))
    func aWholeBadFileOrDatabaseGivesAClearErrorNamingIt(_ item: MalformedCorpus.Case) throws {
        let bytes = try Array(Data(contentsOf: item.url))
        var query: String?
        if item.format == "sqlite" {
            let script = String(decoding: bytes, as: UTF8.self)
            let firstLine = script.prefix { $0 != "\n" }
            query = String(firstLine.dropFirst("-- query: ".count))
        } else if item.format == "sqlite-raw" {
            query = "SELECT order_id FROM orders"
        }
        let ingest = try CorpusIngest(format: item.format, bytes: bytes, query: query)
        defer { ingest.remove() }
        let fileName = item.format.hasPrefix("sqlite") ? "input.db" : "input.csv"
        let quarantine = try ingest.quarantine()
        switch item.expect {
        case "source-error":
            let message = ingest.sourceError?.description ?? ""
            #expect(message.contains(fileName), "\(item.file): \"\(message)\" does not name the file")
            #expect(message.contains(item.reason), "\(item.file): \"\(message)\" does not contain \"\(item.reason)\"")
        case let expect where expect.hasPrefix("quarantine@"):
            let location = "\(fileName):\(expect.dropFirst("quarantine@".count))"
            #expect(ingest.sourceError == nil, "\(item.file): \(String(describing: ingest.sourceError))")
            let reasons = quarantine.filter { $0.location == location }.map(\.reason)
            #expect(
                reasons.count == 1 && reasons[0].contains(item.reason),
                "\(item.file): expected \"\(item.reason)\" at \(location), quarantine is \(quarantine)")
            if item.format == "orders-csv-file" {
                #expect(try ingest.count("SELECT COUNT(*) FROM orders") == 2, "\(item.file): the good rows were lost")
            }
        case let expect where expect.hasPrefix("ok:"):
            #expect(ingest.sourceError == nil, "\(item.file): \(String(describing: ingest.sourceError))")
            #expect(quarantine.isEmpty, "\(item.file): \(quarantine)")
            #expect(try ingest.count("SELECT COUNT(*) FROM orders") == Int64(expect.dropFirst(3)), "\(item.file)")
        default:
            Issue.record("\(item.file): unknown expectation \(item.expect)")
        }
    }

    /// A whole file as a source: a broken export is a source error (`partial`), an empty one a warning.
    @Test(arguments: MalformedCorpus.cases("source-orders-jsonl", "source-orders-csv", "source-credits-csv"))
    func aBrokenExportIsASourceErrorNotAQuietDay(_ item: MalformedCorpus.Case) throws {
        let ingest = try CorpusIngest(format: item.format, bytes: try Array(Data(contentsOf: item.url)))
        defer { ingest.remove() }
        let verdict = ingest.health.verdict(hadEarlierRecords: false)
        let errors = (ingest.sourceError.map { [$0.message] } ?? []) + verdict.errors
        switch item.expect {
        case "partial":
            #expect(
                errors.contains { $0.contains(item.reason) },
                "\(item.file): \(errors) does not contain \"\(item.reason)\"")
        case "warning":
            #expect(errors.isEmpty, "\(item.file): \(errors)")
            #expect(
                verdict.warnings.contains { $0.contains(item.reason) },
                "\(item.file): \(verdict.warnings) does not contain \"\(item.reason)\"")
        case let expect where expect.hasPrefix("ok:"):
            #expect(errors.isEmpty && verdict.warnings.isEmpty, "\(item.file): \(errors) \(verdict.warnings)")
            let view = MalformedCorpus.source(item.format).view
            #expect(try ingest.count("SELECT COUNT(*) FROM \(view)") == Int64(expect.dropFirst(3)), "\(item.file)")
        default:
            Issue.record("\(item.file): unknown expectation \(item.expect)")
        }
    }

    @Test(arguments: MalformedCorpus.cases("config"))
    func aBadConfigFileIsAConfigErrorNamingTheFileAndKey(_ item: MalformedCorpus.Case) throws {
        let folder = TestScratch.root.appendingPathComponent(
            "iapguard-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("iapguard.yml")
        try FileManager.default.copyItem(at: item.url, to: file)
        do {
            _ = try Config.load(from: file)
            Issue.record("\(item.file): loaded without an error")
        } catch let error as ConfigError {
            #expect(error.file == file.path, "\(item.file)")
            #expect(
                error.description.contains(item.reason),
                "\(item.file): \"\(error.description)\" does not contain \"\(item.reason)\"")
        }
    }

    @Test(arguments: MalformedCorpus.cases("rules"))
    func aBadRuleFileIsReportedWithItsLineAndTheOtherRulesStillLoad(_ item: MalformedCorpus.Case) throws {
        let folder = TestScratch.root.appendingPathComponent(
            "iapguard-rules-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let badName = "IAP-950-" + item.url.lastPathComponent
        try FileManager.default.copyItem(at: item.url, to: folder.appendingPathComponent(badName))
        let good = """
            id: IAP-951
            title: Good rule
            description: Loads beside the bad one.
            version: "1"
            status: stable
            level: low
            query: SELECT transaction_id FROM transactions
            entity_key: [transaction_id]
            """
        try Data(good.utf8).write(to: folder.appendingPathComponent("IAP-951-good.yaml"))
        let (rules, errors) = RuleSet.load(from: folder)
        #expect(rules.contains { $0.id == "IAP-951" }, "\(item.file): the good rule did not load")
        switch item.expect {
        case "rule-error":
            #expect(errors.count == 1, "\(item.file): \(errors)")
            let error = errors.first
            #expect(error?.file.hasSuffix(badName) == true, "\(item.file)")
            #expect((error?.line ?? 0) >= 1, "\(item.file): no line in \(String(describing: error))")
            #expect(
                error?.message.contains(item.reason) == true,
                "\(item.file): \"\(String(describing: error))\" does not contain \"\(item.reason)\"")
        case "rule-issue":
            #expect(errors.isEmpty, "\(item.file): \(errors)")
            let issues = try RuleValidator().validate(rules, now: 0).filter { $0.severity == .error }
            #expect(!issues.isEmpty, "\(item.file): no validation error")
            #expect(issues.allSatisfy { $0.file.hasSuffix(badName) && $0.line >= 1 }, "\(item.file): \(issues)")
            #expect(
                issues.contains { $0.message.contains(item.reason) },
                "\(item.file): \(issues) does not contain \"\(item.reason)\"")
        default:
            Issue.record("\(item.file): unknown expectation \(item.expect)")
        }
    }

    @Test(arguments: MalformedCorpus.cases("trust"))
    func aBadTrustedRootFileIsAConfigErrorNamingTheFile(_ item: MalformedCorpus.Case) throws {
        let yaml = """
            trust: [\(item.url.path)]
            apps:
              - bundle_id: com.example.coins
            """
        let config = try Config.parse(yaml, file: URL(fileURLWithPath: "/tmp/iapguard.yml"))
        do {
            _ = try JWSVerifier.make(for: config)
            Issue.record("\(item.file): accepted as a trusted root")
        } catch let error as ConfigError {
            #expect(error.key == "trust", "\(item.file)")
            #expect(error.message.contains(item.url.lastPathComponent), "\(item.file): \(error) does not name the file")
            #expect(error.message.contains(item.reason), "\(item.file): \(error) does not contain \"\(item.reason)\"")
        }
    }

    @Test(arguments: MalformedCorpus.cases("fx"))
    func aBadFXRateFileNamesTheFileAndLine(_ item: MalformedCorpus.Case) throws {
        let name = item.url.lastPathComponent
        switch item.expect {
        case let expect where expect.hasPrefix("ok:"):
            let contents = try FXRateFile.read(item.url, source: "corpus")
            #expect(contents.rates.count == Int(expect.dropFirst(3)), "\(item.file)")
            #expect(contents.badRows.isEmpty && contents.conflicts.isEmpty, "\(item.file)")
            return
        case "fx-bad-row":
            // The row is set aside with its line; the rest of the file is read.
            let contents = try FXRateFile.read(item.url, source: "corpus")
            let rows = contents.badRows.map { "\($0.location): \($0.reason)" }
            #expect(rows.count == 1 && rows[0].contains(name + item.reason), "\(item.file): \(rows)")
            #expect(contents.badRows.first?.sourceName == "fx_rates")
            #expect(!contents.lacking.isEmpty, "\(item.file): nothing said to lack a rate")
            let good =
                (try String(contentsOf: item.url, encoding: .isoLatin1)).split(whereSeparator: \.isNewline).count - 2
            #expect(contents.rates.count == good, "\(item.file): the good rows were not kept")
            return
        case "fx-conflict":
            let contents = try FXRateFile.read(item.url, source: "corpus")
            #expect(
                contents.conflicts.contains { $0.contains(name + item.reason) }, "\(item.file): \(contents.conflicts)")
            return
        default:
            break
        }
        do {
            _ = try FXRateFile.load(item.url, source: "corpus")
            Issue.record("\(item.file): loaded without an error")
        } catch {
            let text = "\(error)"
            #expect(
                text.contains(item.url.lastPathComponent + item.reason),
                "\(item.file): \"\(text)\" does not contain \"\(item.url.lastPathComponent)\(item.reason)\"")
        }
    }
}
