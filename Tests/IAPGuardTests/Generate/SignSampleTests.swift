import Foundation
import Testing

@testable import IAPGuard
@testable import IAPGuardSampleWorld

/// `--sign-sample`: a fraction of ordinary StoreKit 2 purchases is signed, the rest delivered as
/// verifyReceipt-style records; every injected pattern is still injected.
@Suite struct SignSampleTests {
    static let sampled: Result<(URL, WorldSummary), any Error> = Result {
        let dir = TestScratch.root
            .appendingPathComponent("iapguard-world-sampled-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.removeItem(at: dir)
        var options = SmallWorld.options
        options.signSample = 0.1
        return (dir, try WorldGenerator(options: options).write(to: dir))
    }

    @Test func aSampleSignsFewerPurchasesAndDeliversTheRestAsReceipts() throws {
        let (full, fullSummary) = try SmallWorld.first.get()
        let (sampled, sampledSummary) = try Self.sampled.get()
        // Users whose random stream diverges once a purchase is delivered differently buy a little differently.
        #expect(abs(sampledSummary.purchases - fullSummary.purchases) <= fullSummary.purchases / 20)
        let signedFull = try SmallWorld.lines(full, "data/transactions.jsonl").count
        let signedSampled = try SmallWorld.lines(sampled, "data/transactions.jsonl").count
        // Most of this 200-user world's users carry an injected pattern, always signed: its ordinary purchases,
        // the ones sampled (at 0.1 here), are about half of its signed lines.
        #expect(signedFull - signedSampled > signedFull / 3)
        #expect(signedSampled > 0)
        let receiptsFull = try SmallWorld.lines(full, "data/receipts.jsonl").count
        let receiptsSampled = try SmallWorld.lines(sampled, "data/receipts.jsonl").count
        #expect(receiptsSampled > receiptsFull)
    }

    @Test func everyInjectedPatternIsStillThere() throws {
        let (_, fullSummary) = try SmallWorld.first.get()
        let (_, sampledSummary) = try Self.sampled.get()
        #expect(Set(sampledSummary.truthByPattern.keys) == Set(fullSummary.truthByPattern.keys))
        #expect(Set(sampledSummary.truthByRule.keys) == Set(fullSummary.truthByRule.keys))
    }

    @Test func aSampleOutsideZeroToOneIsRejected() throws {
        var options = SmallWorld.options
        options.signSample = 1.5
        let dir = TestScratch.root.appendingPathComponent("iapguard-world-bad-\(UUID())")
        #expect(throws: WorldGenerator.GenerateError.self) { try WorldGenerator(options: options).write(to: dir) }
    }
}
