import Foundation
import Testing

@testable import IAPGuard

/// A subscription upgraded within its group: Apple ends the old plan's transaction early (revocation type
/// UPGRADE, not a refund) and the new plan's transaction, under the same original id, carries the entitlement.
@Suite struct SubscriptionUpgradeLookupTests {
    static let day = LookupTestWorld.day
    static let now = LookupTestWorld.now
    static let monthlyTx = "1000000000001201"
    static let yearlyTx = "1000000000001202"

    /// A monthly plan bought 20 days ago and upgraded to yearly 3 minutes later (a paywall upsell); the backend
    /// reversed the monthly credit at the upgrade and credits the yearly when `creditYearly` holds. `reason` is
    /// Apple's `transactionReason` of both (StoreKit 1 receipts carry none).
    static func world(creditYearly: Bool, reason: String? = "PURCHASE") throws -> LookupTestWorld {
        var w = try LookupTestWorld()
        let at = now - 20 * day
        let upgraded = at + 180_000
        w.purchase(
            monthlyTx, user: "u-up", order: "o-up-m", at: at, product: LookupTestWorld.monthly, price: 9990,
            reason: reason, upgradedAt: upgraded, expires: at + 30 * day)
        w.credit(
            "c-up-m", tx: monthlyTx, order: "o-up-m", user: "u-up", at: at + 60_000, product: LookupTestWorld.monthly,
            units: 30, reversedAt: upgraded + 8000, reason: "upgraded")
        w.purchase(
            yearlyTx, user: "u-up", order: "o-up-y", at: upgraded, product: LookupTestWorld.yearly,
            original: monthlyTx, price: 79_990, reason: reason, expires: upgraded + 365 * day)
        if creditYearly {
            w.credit(
                "c-up-y", tx: yearlyTx, order: "o-up-y", user: "u-up", at: upgraded + 7000,
                product: LookupTestWorld.yearly, units: 365)
        }
        // A plain renewal of another subscription: still a renewal, whatever Apple's reason says.
        w.purchase(
            "1000000000001211", user: "u-plain", order: "o-plain", at: now - 50 * day, product: LookupTestWorld.monthly,
            price: 9990, reason: reason, expires: now - 20 * day)
        w.credit(
            "c-plain", tx: "1000000000001211", order: "o-plain", user: "u-plain", at: now - 50 * day + 60_000,
            product: LookupTestWorld.monthly, units: 30)
        w.purchase(
            "1000000000001212", user: nil, order: nil, at: now - 20 * day, product: LookupTestWorld.monthly,
            original: "1000000000001211", price: 9990, reason: reason == nil ? nil : "RENEWAL",
            expires: now + 10 * day, submittedBy: "u-plain")
        w.credit(
            "c-plain-2", tx: "1000000000001212", order: nil, user: "u-plain", at: now - 20 * day + 60_000,
            product: LookupTestWorld.monthly, units: 30)
        try w.commit(runRules: true)
        return w
    }

    static func verdict(_ world: LookupTestWorld, _ transactionID: String) throws -> ClaimVerdict {
        let result = try world.lookup(transactionID, kind: .transaction)
        return try #require(result.verdicts.first { $0.transactionID == transactionID })
    }

    @Test func anUpgradedPlanWhoseCreditWasReversedIsOwedNothingAndNamesTheNewPlansTransaction() throws {
        let world = try Self.world(creditYearly: true)
        let result = try world.lookup(Self.monthlyTx, kind: .transaction)
        let v = try #require(result.verdicts.first { $0.transactionID == Self.monthlyTx })
        #expect(v.code == .upgraded)
        #expect(!v.code.isProblem)
        // IAP-014 agrees: nothing is owed (the world's orders show another price, which IAP-010 reports).
        #expect(!result.findings.contains { $0.ruleID == "IAP-014" && $0.transactionID == Self.monthlyTx })
        #expect(v.action == nil)
        #expect(v.headline.hasPrefix("Upgraded, nothing owed"))
        #expect(v.headline.contains("new plan's transaction \(Self.yearlyTx)"))
        #expect(v.headline.contains("credited to u-up"))
        #expect(!v.details.contains { $0.contains("without an Apple refund") })
    }

    @Test func theNewPlansTransactionIsLabelledAsTheUpgradeNotARenewal() throws {
        for reason in ["PURCHASE", nil] as [String?] {
            let world = try Self.world(creditYearly: true, reason: reason)
            let v = try Self.verdict(world, Self.yearlyTx)
            #expect(v.code == .paidAndCredited)
            #expect(v.lookAlike == "subscription-upgrade", "reason \(reason ?? "none")")
            #expect(v.details.contains { $0.contains("upgrade") && $0.contains(Self.monthlyTx) })
            #expect(!v.details.contains { $0.hasPrefix("A renewal of") })
            // A renewal is still a renewal.
            #expect(try Self.verdict(world, "1000000000001212").lookAlike == "subscription-renewal")
        }
    }

    @Test func anUncreditedNewPlanIsStillAMissingCreditOnItsOwnID() throws {
        let world = try Self.world(creditYearly: false)
        let yearly = try Self.verdict(world, Self.yearlyTx)
        #expect(yearly.code == .missingCredit)
        #expect(yearly.action?.contains("to u-up for transaction \(Self.yearlyTx)") == true)
        let monthly = try Self.verdict(world, Self.monthlyTx)
        #expect(monthly.code == .upgraded)
        #expect(monthly.action == nil)
        #expect(monthly.headline.contains(Self.yearlyTx))
    }
}
