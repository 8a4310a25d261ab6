import Foundation
import Testing

@testable import IAPGuard

/// Signed lines are parsed and verified on all cores; the records, their order, the quarantine and the
/// batch boundaries must be exactly those of a line-by-line loop.
@Suite struct ParallelIngestTests {
    /// A mixed signed-transaction file: good, forged, malformed and blank lines.
    static func lines() throws -> [String] {
        var lines: [String] = []
        for index in 0..<60 {
            let transaction = VerifyTestWorld.json([
                "transactionId": "\(2_000_000_000 + index)", "originalTransactionId": "\(2_000_000_000 + index)",
                "bundleId": "com.example.coins", "productId": "com.example.coins.pack6", "environment": "Production",
                "type": "Consumable", "quantity": 1, "signedDate": VerifyTestWorld.signedDate,
                "purchaseDate": VerifyTestWorld.signedDate,
            ])
            let chain = index % 7 == 3 ? VerifyTestWorld.other : VerifyTestWorld.good
            let jws = try chain.sign(payload: transaction)
            switch index % 10 {
            case 5: lines.append("{\"signedTransactionInfo\": \"not.a-jws\"}")
            case 8: lines.append("   ")
            case 9:
                lines.append(
                    "{\"signedTransactionInfo\":\"\(jws)\",\"user_id\":\"u-\(index)\",\"received_at\":1717200001000}")
            default: lines.append(jws)
            }
        }
        return lines
    }

    static func ingestor(file: URL, batchSize: Int) throws -> SourceIngestor {
        let source = Config.Source(name: "signed", kind: .signedTransactions, format: .jsonl, path: file, query: nil)
        return SourceIngestor(
            source: source, verifier: try VerifyTestWorld.verifier(), configHash: "test", batchSize: batchSize)
    }

    static func writeFile(_ lines: [String]) throws -> URL {
        let url = TestScratch.root.appendingPathComponent("iapguard-parallel-\(UUID()).jsonl")
        try Data(lines.joined(separator: "\n").utf8).write(to: url)
        return url
    }

    @Test func parallelParsingGivesTheLineByLineResultsInOrder() throws {
        let lines = try Self.lines()
        let ingestor = try Self.ingestor(file: try Self.writeFile(lines), batchSize: 2000)
        let pending = lines.enumerated().map { SourceIngestor.PendingLine.text(number: $0 + 1, bytes: Array($1.utf8)) }
        let parallel = ingestor.parseLines(pending, fileName: "f.jsonl").map { try? $0.get() }
        let sequential = pending.map { try? ingestor.parsePendingLine($0, fileName: "f.jsonl").get() }
        #expect(parallel.count == lines.count)
        #expect(parallel.map { $0?.sightings } == sequential.map { $0?.sightings })
        #expect(parallel.map { $0?.quarantined } == sequential.map { $0?.quarantined })
        let outcomes = parallel.compactMap { $0?.sightings.first?.verification.status }
        #expect(outcomes.contains(.verified))
        #expect(outcomes.contains(.failed))
        #expect(parallel.contains { $0?.quarantined.first?.location == "f.jsonl:6" })
    }

    @Test func batchesKeepTheirBoundariesAndEveryRecordInLineOrder() throws {
        let lines = try Self.lines()
        let file = try Self.writeFile(lines)
        for batchSize in [1, 7, 2000] {
            var batches: [IngestBatch] = []
            try Self.ingestor(file: file, batchSize: batchSize).ingestFile(file, sink: { batches.append($0) })
            // Every batch but the last is flushed as soon as it reaches the batch size.
            for batch in batches.dropLast() { #expect(batch.recordCount == batchSize) }
            let sightings = batches.flatMap(\.sightings).map(\.sourceRef)
            let quarantined = batches.flatMap(\.quarantined).map(\.location)
            let name = file.lastPathComponent
            let nonBlank = (1...lines.count).filter { !lines[$0 - 1].trimmingCharacters(in: .whitespaces).isEmpty }
            #expect(
                sightings + quarantined == nonBlank.filter { $0 % 10 != 6 }.map { "\(name):\($0)" }
                    + nonBlank.filter { $0 % 10 == 6 }.map { "\(name):\($0)" })
        }
    }
}
