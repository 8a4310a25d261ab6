import Foundation
import Testing

@testable import IAPGuard

/// The accounts a verdict names, and what it tells support to do with them: never to credit an account that
/// already holds the purchase, an order judged by the transaction its credit names, a family member's copy
/// that names the buyer and the member right.
@Suite struct LookupAnswerAccountsTests {
    static let day = LookupTestWorld.day
    static let now = LookupTestWorld.now

    static func world(_ build: (inout LookupTestWorld) -> Void) throws -> LookupTestWorld {
        var world = try LookupTestWorld()
        build(&world)
        try world.commit(runRules: true)
        return world
    }

    /// u-buyer bought noads and keeps its credit; the same person restored it into a second account u-second,
    /// which was credited too. u-lost bought noads whose credit was later reversed; its restore into u-third
    /// was credited.
    static func restoreWorld() throws -> LookupTestWorld {
        try world { w in
            for (buyer, second, tx, reversed) in [
                ("u-buyer", "u-second", "1000000000001401", false), ("u-lost", "u-third", "1000000000001411", true),
            ] {
                w.purchase(
                    tx, user: buyer, order: "o-\(buyer)", at: now - 30 * day, product: LookupTestWorld.noAds,
                    legacy: true)
                w.credit(
                    "c-\(buyer)", tx: tx, order: "o-\(buyer)", user: buyer, at: now - 30 * day + 60_000,
                    product: LookupTestWorld.noAds, units: 1, reversedAt: reversed ? now - 20 * day : nil,
                    reason: reversed ? "manual" : nil)
                let restore = String(tx.dropLast()) + "2"
                w.purchase(
                    restore, user: nil, order: nil, at: now - 10 * day, product: LookupTestWorld.noAds, original: tx,
                    legacy: true, submittedBy: second)
                w.credit(
                    "c-\(second)", tx: restore, order: nil, user: second, at: now - 10 * day + 60_000,
                    product: LookupTestWorld.noAds, units: 1)
            }
        }
    }

    @Test func aRestoreIntoASecondAccountOnlyReversesItsCreditWhileTheBuyersOwnCreditStands() throws {
        let world = try Self.restoreWorld()
        let result = try world.lookup("1000000000001402", kind: .transaction)
        let v = try #require(result.verdicts.first)
        #expect(v.code == .misCredit)
        #expect(v.paidBy == "u-buyer" && v.creditedTo == ["u-second"])
        let action = try #require(v.action)
        #expect(action.hasPrefix("Reverse credit c-u-second of u-second"))
        #expect(!action.contains("Credit u-buyer"))
        #expect(action.contains("c-u-buyer"))
    }

    @Test func aRestoreIntoASecondAccountStillSaysToCreditTheBuyerWhoseOwnCreditWasReversed() throws {
        let world = try Self.restoreWorld()
        let v = try #require(try world.lookup("1000000000001412", kind: .transaction).verdicts.first)
        #expect(v.code == .misCredit)
        #expect(v.action == "Credit u-lost and reverse credit c-u-third of u-third.")
    }
}
