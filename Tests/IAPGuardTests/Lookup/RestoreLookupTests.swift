import Foundation
import Testing

@testable import IAPGuard

/// A non-consumable restored on a new device (StoreKit 1: a new transaction id under the original's) that
/// the backend did not grant again: the customer already owns it, so support is told nothing is owed, and
/// IAP-014 agrees.
@Suite struct RestoreLookupTests {
    @Test func aRestoreOfACreditedNonConsumableIsOwedNothingAndAnUncreditedOneIsMissing() throws {
        let day = LookupTestWorld.day
        let now = LookupTestWorld.now
        var world = try LookupTestWorld()
        world.purchase(
            "1000000000000301", user: "u-own", order: "o-own", at: now - 20 * day, product: LookupTestWorld.noAds,
            price: 2990, legacy: true)
        world.credit(
            "c-own", tx: "1000000000000301", order: "o-own", user: "u-own", at: now - 20 * day + 60_000,
            product: LookupTestWorld.noAds, units: 1)
        world.purchase(
            "1000000000000302", user: nil, order: nil, at: now - 10 * day, product: LookupTestWorld.noAds,
            original: "1000000000000301", price: 2990, legacy: true)
        // The same restore of a purchase never credited is still owed.
        world.purchase(
            "1000000000000311", user: "u-owed", order: "o-owed", at: now - 20 * day, product: LookupTestWorld.noAds,
            price: 2990, legacy: true)
        world.purchase(
            "1000000000000312", user: nil, order: nil, at: now - 10 * day, product: LookupTestWorld.noAds,
            original: "1000000000000311", price: 2990, legacy: true)
        try world.commit(runRules: true)

        let restored = try world.lookup("1000000000000302", kind: .transaction)
        let verdict = try #require(restored.verdicts.first { $0.transactionID == "1000000000000302" })
        #expect(verdict.code == .paidAndCredited)
        #expect(verdict.lookAlike == "restore")
        #expect(verdict.headline.hasPrefix("Restored, nothing owed"))
        #expect(!restored.findings.contains { $0.ruleID == "IAP-014" && $0.isActive })

        let owed = try world.lookup("1000000000000312", kind: .transaction)
        #expect(owed.verdicts.first { $0.transactionID == "1000000000000312" }?.code == .missingCredit)
        #expect(owed.findings.contains { $0.ruleID == "IAP-014" && $0.isActive })
    }
}
