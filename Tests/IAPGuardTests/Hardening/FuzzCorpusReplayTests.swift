import Foundation
import Testing

@testable import IAPGuard

/// Replays the fuzz seed corpus (`Fuzz/corpus/<target>/`) through the fuzz targets' entry points in the
/// ordinary (uninstrumented) test build, so CI notices when a seed or a past finding crashes again.
@Suite struct FuzzCorpusReplayTests {
    static let corpus = Fixtures.repoRoot.appendingPathComponent("Fuzz/corpus")

    static func seeds(_ target: String) -> [URL] {
        let folder = corpus.appendingPathComponent(target)
        let files = (try? FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)) ?? []
        return files.filter { !$0.lastPathComponent.hasPrefix(".") }.sorted { $0.path < $1.path }
    }

    static let ingestTargets = [
        ("FuzzReceiptLine", "receipts"), ("FuzzSignedTransactionLine", "signed"),
        ("FuzzNotificationLine", "notifications"), ("FuzzOrdersCSV", "orders-csv-file"),
        ("FuzzOrdersCSV", "credits"),
    ]

    @Test func everyTargetHasAFewSeeds() {
        for target in [
            "FuzzReceiptLine", "FuzzSignedTransactionLine", "FuzzNotificationLine", "FuzzOrdersCSV", "FuzzConfigYAML",
            "FuzzRuleYAML", "FuzzFXRates",
        ] {
            let count = Self.seeds(target).count
            #expect((3...40).contains(count), "\(target) has \(count) seeds")
        }
    }

    @Test(arguments: ingestTargets)
    func ingestSeedsAreReadWithoutASourceFailureOrCrash(_ target: String, _ format: String) throws {
        for seed in Self.seeds(target) {
            let bytes = try Array(Data(contentsOf: seed))
            let ingest = try CorpusIngest(format: format, bytes: bytes)
            defer { ingest.remove() }
            // The CSV target's seeds are also read as credits JSON Lines and the other way round, so only
            // the single-format targets must read every seed without a source-level error.
            if !target.hasPrefix("FuzzOrders") {
                #expect(
                    ingest.sourceError == nil, "\(seed.lastPathComponent): \(String(describing: ingest.sourceError))")
            }
            // Every record is accounted for: stored or quarantined with a location and a reason.
            for record in try ingest.quarantine() {
                #expect(record.location.hasPrefix("input."), "\(seed.lastPathComponent)")
                #expect(!record.reason.isEmpty, "\(seed.lastPathComponent)")
            }
        }
    }

    @Test func configSeedsLoadOrFailWithAConfigError() throws {
        for seed in Self.seeds("FuzzConfigYAML") {
            do {
                _ = try Config.load(from: seed)
            } catch is ConfigError {
            } catch {
                Issue.record("\(seed.lastPathComponent): \(type(of: error)) is not a ConfigError: \(error)")
            }
        }
    }

    @Test func ruleSeedsLoadOrFailWithALocatedError() {
        for seed in Self.seeds("FuzzRuleYAML") {
            if case .failure(let error) = RuleSet.load(file: seed) {
                #expect(error.line >= 0 && !error.message.isEmpty, "\(seed.lastPathComponent)")
            }
        }
    }

    @Test func fxSeedsLoadOrFailWithASourceError() throws {
        for seed in Self.seeds("FuzzFXRates") {
            do {
                _ = try FXRateFile.load(seed, source: "seed")
            } catch is SourceError {
            } catch {
                Issue.record("\(seed.lastPathComponent): \(type(of: error)) is not a SourceError: \(error)")
            }
        }
    }
}
