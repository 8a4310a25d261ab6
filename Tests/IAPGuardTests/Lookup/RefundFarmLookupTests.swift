import Foundation
import Testing

@testable import IAPGuard

/// One Apple Account refunding once in each of several backend accounts is one IAP-016 finding under the
/// account of its latest refund: support looking up any of the accounts, their purchases or orders finds it,
/// and an account the finding does not name does not.
@Suite struct RefundFarmLookupTests {
    static let day = LookupTestWorld.day
    static let hour = LookupTestWorld.hour
    static let now = LookupTestWorld.now
    static let appleAccount = "705000000000009610"

    /// Three accounts of one Apple Account, each buying once and refunded a day later (credits clawed back),
    /// plus `extra` records; the shipped rules run over it.
    static func world(_ extra: (inout LookupTestWorld) -> Void = { _ in }) throws -> LookupTestWorld {
        var w = try LookupTestWorld()
        for i in 0..<3 {
            let at = now - Int64(16 - 4 * i) * day
            let tx = "200000000961000\(i)"
            w.purchase(
                tx, user: "u-farm-\(i)", order: "o-farm-\(i)", at: at, revokedAt: at + day,
                appleAccount: appleAccount)
            w.credit(
                "c-farm-\(i)", tx: tx, order: "o-farm-\(i)", user: "u-farm-\(i)", at: at + 60_000,
                reversedAt: at + day + hour, reason: "refund")
            w.notification("n-farm-\(i)", type: "REFUND", tx: tx, at: at + day, revokedAt: at + day)
        }
        extra(&w)
        try w.commit(runRules: true)
        return w
    }

    static func refundAbuse(_ result: LookupResult) -> [LookupFinding] {
        result.findings.filter { $0.ruleID == "IAP-016" && $0.isActive }
    }

    @Test func aRefundFarmIsOneFindingFoundByLookingUpAnyOfItsAccountsPurchasesOrOrders() throws {
        let world = try Self.world()
        for id in ["u-farm-0", "u-farm-1", "u-farm-2", "2000000009610000", "o-farm-1", "2000000009610002"] {
            let found = Self.refundAbuse(try world.lookup(id))
            #expect(found.count == 1, "\(id)")
            #expect(found.first?.userID == "u-farm-2", "\(id): the account of the latest refund")
            #expect(found.first?.summary.contains("Apple Account \(Self.appleAccount)") == true, "\(id)")
        }
        // Each account's own lookup finds the one finding, not one per account.
        let ids = Set(try ["u-farm-0", "u-farm-1"].flatMap { try Self.refundAbuse(world.lookup($0)).map(\.findingID) })
        #expect(ids.count == 1)
    }

    @Test func anAccountOfTheSameAppleAccountWithoutARefundIsNotNamedAndDoesNotSeeTheFarm() throws {
        let world = try Self.world { w in
            w.purchase(
                "2000000009610090", user: "u-sibling", order: "o-sibling", at: Self.now - 5 * Self.day,
                appleAccount: Self.appleAccount)
            w.credit(
                "c-sibling", tx: "2000000009610090", order: "o-sibling", user: "u-sibling",
                at: Self.now - 5 * Self.day + 60_000)
        }
        #expect(Self.refundAbuse(try world.lookup("u-sibling")).isEmpty)
        #expect(Self.refundAbuse(try world.lookup("2000000009610090")).isEmpty)
        #expect(Self.refundAbuse(try world.lookup("u-farm-0")).count == 1)
    }

    @Test func aConsumptionRequestPaidByARefundFarmsAppleAccountIsDeclined() throws {
        let world = try Self.world { w in
            let at = Self.now - 3 * Self.day
            w.purchase(
                "2000000009610091", user: "u-farm-3", order: "o-farm-3", at: at, appleAccount: Self.appleAccount)
            w.credit("c-farm-3", tx: "2000000009610091", order: "o-farm-3", user: "u-farm-3", at: at + 60_000)
            w.notification(
                "n-farm-3", type: "CONSUMPTION_REQUEST", tx: "2000000009610091", at: at + Self.day,
                reason: "UNINTENDED_PURCHASE")
        }
        let result = try world.lookup("2000000009610091", consented: true)
        let draft = try #require(result.consumptionDrafts.first)
        #expect(draft.appleRequest?.refundPreference == "DECLINE")
        #expect(draft.basis.contains { $0.contains("an active IAP-016 refund-abuse finding") })
    }
}
