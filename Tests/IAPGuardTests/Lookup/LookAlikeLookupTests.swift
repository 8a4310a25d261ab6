import Foundation
import Testing

@testable import IAPGuard

/// Benign records real stores send that look like a problem, as support sees them: the lookup's verdict and
/// the findings agree that nothing is owed or wrong.
@Suite struct LookAlikeLookupTests {
    static let day = LookupTestWorld.day
    static let now = LookupTestWorld.now

    /// A world of `build`'s records with the shipped rules run over it.
    static func world(_ build: (inout LookupTestWorld) -> Void) throws -> LookupTestWorld {
        var world = try LookupTestWorld()
        build(&world)
        try world.commit(runRules: true)
        return world
    }

    /// The verdict on `transactionID` and whether a rule of `rules` holds an active finding on that transaction.
    static func judged(_ world: LookupTestWorld, _ transactionID: String, rules: Set<String>) throws
        -> (verdict: ClaimVerdict, result: LookupResult, flagged: Bool)
    {
        let result = try world.lookup(transactionID, kind: .transaction)
        let verdict = try #require(result.verdicts.first { $0.transactionID == transactionID })
        let flagged = result.findings.contains {
            rules.contains($0.ruleID) && $0.isActive && $0.transactionID == transactionID
        }
        return (verdict, result, flagged)
    }

    /// `transactionID`'s verdict is `code`, a problem exactly when a rule of `rules` holds an active finding on
    /// it (`flagged`): the lookup and the findings agree.
    static func expectJudged(
        _ world: LookupTestWorld, _ transactionID: String, _ code: ClaimVerdict.Code, flagged: Bool, rules: Set<String>,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let judged = try Self.judged(world, transactionID, rules: rules)
        #expect(judged.verdict.code == code, sourceLocation: sourceLocation)
        #expect(judged.verdict.code.isProblem == flagged, sourceLocation: sourceLocation)
        #expect(judged.flagged == flagged, sourceLocation: sourceLocation)
    }

    @Test func anUpgradedSubscriptionStillCreditedIsPaidAndCreditedWithTheUpgradeInItsTimeline() throws {
        let world = try Self.world { w in
            w.purchase(
                "1000000000000201", user: "u-up", order: "o-up", at: Self.now - 20 * Self.day,
                product: LookupTestWorld.monthly, price: 4990, upgradedAt: Self.now - 10 * Self.day)
            w.credit(
                "c-up", tx: "1000000000000201", order: "o-up", user: "u-up", at: Self.now - 20 * Self.day + 60_000,
                product: LookupTestWorld.monthly, units: 1)
        }
        let judged = try Self.judged(world, "1000000000000201", rules: ["IAP-015", "IAP-016"])
        #expect(judged.verdict.code == .paidAndCredited)
        #expect(judged.result.timeline.contains { $0.kind == .upgraded && $0.description.contains("not a refund") })
        #expect(!judged.result.timeline.contains { $0.kind == .refund || $0.kind == .revoke })
        #expect(!judged.flagged)
    }

    @Test func aRestoreOfACreditedNonConsumableIsOwedNothingAndAnUncreditedOneIsMissing() throws {
        let world = try Self.world { w in
            for (original, restore, user, credited) in [
                ("1000000000000301", "1000000000000302", "u-own", true),
                ("1000000000000311", "1000000000000312", "u-owed", false),
            ] {
                w.purchase(
                    original, user: user, order: "o-\(user)", at: Self.now - 20 * Self.day,
                    product: LookupTestWorld.noAds, price: 2990, legacy: true)
                if credited {
                    w.credit(
                        "c-\(user)", tx: original, order: "o-\(user)", user: user,
                        at: Self.now - 20 * Self.day + 60_000, product: LookupTestWorld.noAds, units: 1)
                }
                w.purchase(
                    restore, user: nil, order: nil, at: Self.now - 10 * Self.day, product: LookupTestWorld.noAds,
                    original: original, price: 2990, legacy: true)
            }
        }
        let restored = try Self.judged(world, "1000000000000302", rules: ["IAP-014"])
        #expect(restored.verdict.code == .paidAndCredited)
        #expect(restored.verdict.lookAlike == "restore")
        #expect(restored.verdict.headline.hasPrefix("Restored, nothing owed"))
        #expect(!restored.flagged)
        // The same restore of a purchase never credited is still owed.
        try Self.expectJudged(world, "1000000000000312", .missingCredit, flagged: true, rules: ["IAP-014"])
    }

    @Test func aRestoreWhoseOriginalIsOnlyInTheLedgerIsOwedNothingAndOneWhoseCreditWasReversedIsOwed() throws {
        let world = try Self.world { w in
            // The original purchase was credited before its Apple record reached the store.
            w.credit(
                "c-ledger", tx: "1000000000000320", order: nil, user: "u-ledger", at: Self.now - 30 * Self.day,
                product: LookupTestWorld.noAds, units: 1)
            w.purchase(
                "1000000000000321", user: nil, order: nil, at: Self.now - 10 * Self.day, product: LookupTestWorld.noAds,
                original: "1000000000000320", price: 2990, legacy: true)
            // The original's credit was taken back: the customer does not own it now.
            w.purchase(
                "1000000000000330", user: "u-gone", order: "o-gone", at: Self.now - 30 * Self.day,
                product: LookupTestWorld.noAds, price: 2990, legacy: true)
            w.credit(
                "c-gone", tx: "1000000000000330", order: "o-gone", user: "u-gone", at: Self.now - 30 * Self.day,
                product: LookupTestWorld.noAds, units: 1, reversedAt: Self.now - 20 * Self.day, reason: "manual")
            w.purchase(
                "1000000000000331", user: nil, order: nil, at: Self.now - 10 * Self.day, product: LookupTestWorld.noAds,
                original: "1000000000000330", price: 2990, legacy: true)
        }
        let ledger = try Self.judged(world, "1000000000000321", rules: ["IAP-014"])
        #expect(ledger.verdict.code == .paidAndCredited)
        #expect(ledger.verdict.lookAlike == "restore")
        #expect(!ledger.flagged)
        try Self.expectJudged(world, "1000000000000331", .missingCredit, flagged: true, rules: ["IAP-014"])
    }

    @Test func aFamilySharingCopyNoOneCreditedIsNotAPaymentWhileTheOrganisersPurchaseIsStillChecked() throws {
        let world = try Self.world { w in
            w.purchase(
                "1000000000000401", user: "u-org", order: "o-org", at: Self.now - 20 * Self.day,
                product: LookupTestWorld.monthly, price: 4990)
            w.purchase(
                "1000000000000402", user: nil, order: nil, at: Self.now - 19 * Self.day,
                product: LookupTestWorld.monthly, original: "1000000000000401", price: 4990,
                ownership: "FAMILY_SHARED")
        }
        let copy = try Self.judged(world, "1000000000000402", rules: ["IAP-014"])
        #expect(copy.verdict.code == .familyShared)
        #expect(!copy.verdict.code.isProblem)
        #expect(copy.verdict.headline.contains("bought by u-org (transaction 1000000000000401)"))
        #expect(!copy.flagged)
        // The organiser's own purchase, never credited, is still a missing credit.
        try Self.expectJudged(world, "1000000000000401", .missingCredit, flagged: true, rules: ["IAP-014"])
    }

    /// A monthly subscription bought 100 days ago, its first purchase credited, and three renewals, credited
    /// when `creditRenewals` holds except the last.
    static func subscriptionWorld(creditRenewals: Bool) throws -> LookupTestWorld {
        try Self.world { w in
            w.purchase(
                "1000000000000500", user: "u-sub", order: "o-sub", at: Self.now - 100 * Self.day,
                product: LookupTestWorld.monthly, price: 4990)
            w.credit(
                "c-500", tx: "1000000000000500", order: "o-sub", user: "u-sub", at: Self.now - 100 * Self.day + 60_000,
                product: LookupTestWorld.monthly, units: 1)
            for period in 1...3 {
                let tx = "100000000000050\(period)"
                let at = Self.now - (100 - Int64(period) * 30) * Self.day
                w.purchase(
                    tx, user: "u-sub", order: nil, at: at, product: LookupTestWorld.monthly,
                    original: "1000000000000500",
                    price: 4990, reason: "RENEWAL")
                if creditRenewals && period < 3 {
                    w.credit(
                        "c-50\(period)", tx: tx, order: nil, user: "u-sub", at: at + 60_000,
                        product: LookupTestWorld.monthly, units: 1)
                }
            }
        }
    }

    @Test func aRenewalIsOwedNoCreditOfItsOwnWhereTheBackendCreditsASubscriptionOnce() throws {
        let world = try Self.subscriptionWorld(creditRenewals: false)
        for tx in ["1000000000000501", "1000000000000503"] {
            let renewal = try Self.judged(world, tx, rules: ["IAP-014"])
            #expect(renewal.verdict.code == .subscriptionRenewal)
            #expect(!renewal.verdict.code.isProblem)
            #expect(renewal.verdict.lookAlike == "subscription-renewal")
            #expect(renewal.verdict.headline.contains("0 of 3 renewals"))
            #expect(renewal.verdict.details.contains { $0.contains("1000000000000500") && $0.contains("u-sub") })
            #expect(!renewal.flagged)
        }
    }

    /// Renewals Apple reported (no order, no credit, no submitter) still belong to the subscriber's lookup:
    /// judged, and counted in the profile.
    @Test func aUserLookupJudgesAndCountsTheRenewalsOfTheirSubscription() throws {
        let world = try Self.world { w in
            w.purchase(
                "1000000000000900", user: "u-renew", order: "o-renew", at: Self.now - 70 * Self.day,
                product: LookupTestWorld.monthly, price: 4990)
            w.credit(
                "c-900", tx: "1000000000000900", order: "o-renew", user: "u-renew",
                at: Self.now - 70 * Self.day + 60_000, product: LookupTestWorld.monthly, units: 1)
            for period in 1...2 {
                w.purchase(
                    "100000000000090\(period)", user: nil, order: nil,
                    at: Self.now - (70 - Int64(period) * 30) * Self.day, product: LookupTestWorld.monthly,
                    original: "1000000000000900", price: 4990, reason: "RENEWAL")
            }
        }
        let result = try world.lookup("u-renew", kind: .user)
        #expect(
            result.verdicts.map(\.transactionID) == ["1000000000000900", "1000000000000901", "1000000000000902"])
        #expect(result.verdicts.dropFirst().allSatisfy { $0.code == .subscriptionRenewal })
        #expect(result.users.first?.purchaseCount == 3)
    }

    @Test func aRenewalLeftUncreditedWhereTheBackendCreditsRenewalsIsAMissingCredit() throws {
        let world = try Self.subscriptionWorld(creditRenewals: true)
        try Self.expectJudged(world, "1000000000000503", .missingCredit, flagged: true, rules: ["IAP-014"])
        try Self.expectJudged(world, "1000000000000502", .paidAndCredited, flagged: false, rules: ["IAP-014"])
    }

    @Test func aCatalogProductNamedOutsideTheBundleIsNoForgeryWhileAnUnknownOneIs() throws {
        let world = try Self.world { w in
            w.purchase(
                "1000000000000601", user: "u-gems", order: "o-gems", at: Self.now - 10 * Self.day,
                product: LookupTestWorld.gems, legacy: true, anomalies: ["product-outside-bundle"])
            w.credit(
                "c-601", tx: "1000000000000601", order: "o-gems", user: "u-gems", at: Self.now - 10 * Self.day + 60_000,
                product: LookupTestWorld.gems, units: 1000)
            w.purchase(
                "1000000000000602", user: "u-crack", order: "o-crack", at: Self.now - 10 * Self.day,
                product: "com.crackapp.unlimited.coins", legacy: true, anomalies: ["product-outside-bundle"])
            w.credit(
                "c-602", tx: "1000000000000602", order: "o-crack", user: "u-crack",
                at: Self.now - 10 * Self.day + 60_000, product: "com.crackapp.unlimited.coins", units: 10000)
        }
        try Self.expectJudged(
            world, "1000000000000601", .paidAndCredited, flagged: false, rules: ["IAP-006", "IAP-007"])
        try Self.expectJudged(world, "1000000000000602", .forged, flagged: true, rules: ["IAP-007"])
    }

    @Test func aQuantityThreePurchaseCreditedOneRowPerItemIsOneCreditAndAMissingRowIsAWrongQuantity() throws {
        let world = try Self.world { w in
            for (tx, user, rows) in [("1000000000000701", "u-rows", 3), ("1000000000000702", "u-short", 2)] {
                w.purchase(tx, user: user, order: "o-\(user)", at: Self.now - 10 * Self.day, price: 2970, quantity: 3)
                for row in 0..<rows {
                    w.credit(
                        "c-\(user)-\(row)", tx: tx, order: "o-\(user)", user: user,
                        at: Self.now - 10 * Self.day + 60_000, units: 100)
                }
            }
        }
        let rows = try Self.judged(world, "1000000000000701", rules: ["IAP-001", "IAP-019"])
        #expect(rows.verdict.code == .paidAndCredited)
        #expect(rows.verdict.details.contains { $0.contains("3 rows, one per item") })
        #expect(!rows.flagged)
        let short = try Self.judged(world, "1000000000000702", rules: ["IAP-001", "IAP-019"])
        #expect(short.verdict.code == .creditedWrongItem)
        #expect(short.verdict.headline.contains("should grant 300 units, but 200"))
        #expect(!short.result.findings.contains { $0.ruleID == "IAP-001" && $0.isActive })
        #expect(short.flagged)
    }

    @Test func aNonConsumableUnlockedTwiceForOneAccountIsOneUnlockAndAConsumableIsReplayed() throws {
        let world = try Self.world { w in
            for (tx, user, product) in [
                ("1000000000000711", "u-restore", LookupTestWorld.noAds),
                ("1000000000000712", "u-coins", LookupTestWorld.pack100),
            ] {
                w.purchase(tx, user: user, order: "o-\(user)", at: Self.now - 10 * Self.day, product: product)
                for row in 0..<2 {
                    w.credit(
                        "c-\(user)-\(row)", tx: tx, order: row == 0 ? "o-\(user)" : nil, user: user,
                        at: Self.now - 10 * Self.day + 60_000 + Int64(row) * 5 * Self.day, product: product,
                        units: product == LookupTestWorld.noAds ? 1 : 100)
                }
            }
        }
        let restore = try Self.judged(world, "1000000000000711", rules: ["IAP-001"])
        #expect(restore.verdict.code == .paidAndCredited)
        #expect(restore.verdict.details.contains { $0.contains("a non-consumable unlocks once") })
        #expect(!restore.flagged)
        let coins = try Self.judged(world, "1000000000000712", rules: ["IAP-001"])
        #expect(coins.verdict.code == .replayed)
        #expect(coins.flagged)
    }

    @Test func aSubscriptionCreditedTheDaysOfItsApplePeriodIsPaidAndCredited() throws {
        let world = try Self.world { w in
            // A 31-day month, credited 31 days (the catalog says 1 unit a period).
            let at = Self.now - 40 * Self.day
            w.purchase(
                "1000000000000801", user: "u-days", order: "o-days", at: at, product: LookupTestWorld.monthly,
                price: 4990, expires: at + 31 * Self.day)
            w.credit(
                "c-801", tx: "1000000000000801", order: "o-days", user: "u-days", at: at + 60_000,
                product: LookupTestWorld.monthly, units: 31)
        }
        try Self.expectJudged(world, "1000000000000801", .paidAndCredited, flagged: false, rules: ["IAP-019"])
    }

    /// Apple extended the period by a week (a renewal date extension moves expiresDate); the backend credits
    /// the month, then the week as a row of its own. Crediting the month twice is still a replay.
    @Test func aSubscriptionWeekApplesExtensionAddedIsPartOfTheCreditWhileAMonthTwiceIsReplayed() throws {
        let at = Self.now - 45 * Self.day
        let world = try Self.world { w in
            w.purchase(
                "1000000000000811", user: "u-ext", order: "o-ext", at: at, product: LookupTestWorld.monthly,
                price: 4990, expires: at + 38 * Self.day)
            w.credit(
                "c-811a", tx: "1000000000000811", order: "o-ext", user: "u-ext", at: at + 60_000,
                product: LookupTestWorld.monthly, units: 31)
            w.credit(
                "c-811b", tx: "1000000000000811", order: "o-ext", user: "u-ext", at: at + 20 * Self.day,
                product: LookupTestWorld.monthly, units: 7)
            w.purchase(
                "1000000000000812", user: "u-twice", order: "o-twice", at: at, product: LookupTestWorld.monthly,
                price: 4990, expires: at + 31 * Self.day)
            for suffix in ["a", "b"] {
                w.credit(
                    "c-812\(suffix)", tx: "1000000000000812", order: "o-twice", user: "u-twice", at: at + 60_000,
                    product: LookupTestWorld.monthly, units: 31)
            }
        }
        try Self.expectJudged(
            world, "1000000000000811", .paidAndCredited, flagged: false, rules: ["IAP-001", "IAP-019"])
        try Self.expectJudged(world, "1000000000000812", .replayed, flagged: true, rules: ["IAP-001", "IAP-019"])
    }

    /// The renewal after a month failed and Apple granted 3 days of Billing Grace Period: the backend credits
    /// the month, then the grace days as a row of their own (IAP-001 and IAP-019 hold the same). Grace days Apple
    /// never reported, or more than it granted, are still a replay.
    @Test func graceDaysAppleGrantedAfterTheLastPaidPeriodArePartOfTheCreditWhileOthersAreReplayed() throws {
        let at = Self.now - 45 * Self.day
        let expires = at + 31 * Self.day
        let world = try Self.world { w in
            for (tx, user, graceUnits, reported) in [
                ("1000000000000921", "u-grace", Int64(3), true), ("1000000000000922", "u-unreported", 3, false),
                ("1000000000000923", "u-beyond", 5, true),
            ] {
                w.purchase(
                    tx, user: user, order: "o-\(user)", at: at, product: LookupTestWorld.monthly, price: 4990,
                    expires: expires)
                w.credit(
                    "c-\(user)", tx: tx, order: "o-\(user)", user: user, at: at + 60_000,
                    product: LookupTestWorld.monthly, units: 31)
                w.credit(
                    "c-\(user)-grace", tx: tx, order: "o-\(user)", user: user, at: expires + 120_000,
                    product: LookupTestWorld.monthly, units: graceUnits)
                if reported {
                    w.notification(
                        "n-\(user)", type: "DID_FAIL_TO_RENEW", tx: tx, at: expires + 60_000, subtype: "GRACE_PERIOD",
                        gracePeriodExpires: expires + 3 * Self.day)
                }
            }
        }
        let granted = try Self.judged(world, "1000000000000921", rules: ["IAP-001", "IAP-019"])
        #expect(granted.verdict.code == .paidAndCredited)
        #expect(!granted.flagged)
        #expect(granted.verdict.details.contains { $0.contains("34 days") && $0.contains("billing grace period") })
        #expect(granted.result.timeline.contains { $0.description.contains("grace period until") })
        try Self.expectJudged(world, "1000000000000922", .replayed, flagged: true, rules: ["IAP-001", "IAP-019"])
        try Self.expectJudged(world, "1000000000000923", .replayed, flagged: true, rules: ["IAP-001", "IAP-019"])
    }

    /// A backend that keys a subscription by its original transaction writes each period's days against it: the
    /// original's rows credit the periods Apple sold under it while no renewal has a credit of its own (IAP-001
    /// holds the same). A row more than the periods is still a replay.
    @Test func aSubscriptionCreditedOncePerPeriodAgainstItsOriginalTransactionIsOneCreditWhileAnExtraRowIsAReplay()
        throws
    {
        let at = Self.now - 95 * Self.day
        let world = try Self.world { w in
            for (original, user, rows) in [("1000000000000931", "u-keyed", 3), ("1000000000000941", "u-extra", 4)] {
                w.purchase(
                    original, user: user, order: "o-\(user)", at: at, product: LookupTestWorld.monthly, price: 4990,
                    expires: at + 31 * Self.day)
                for period in 1...2 {
                    w.purchase(
                        String(Int64(original)! + Int64(period)), user: nil, order: nil,
                        at: at + Int64(period) * 31 * Self.day, product: LookupTestWorld.monthly, original: original,
                        price: 4990, reason: "RENEWAL", expires: at + Int64(period + 1) * 31 * Self.day)
                }
                for row in 0..<rows {
                    w.credit(
                        "c-\(user)-\(row)", tx: original, order: row == 0 ? "o-\(user)" : nil, user: user,
                        at: at + Int64(row) * 31 * Self.day + 60_000, product: LookupTestWorld.monthly, units: 31)
                }
            }
        }
        let keyed = try Self.judged(world, "1000000000000931", rules: ["IAP-001"])
        #expect(keyed.verdict.code == .paidAndCredited)
        #expect(!keyed.flagged)
        #expect(keyed.verdict.details.contains { $0.contains("93 days") && $0.contains("periods Apple sold") })
        try Self.expectJudged(world, "1000000000000941", .replayed, flagged: true, rules: ["IAP-001"])
    }

    /// A promotion's bonus ("double coins on your first pack") written as a row of a backend item naming the
    /// purchase, beside the purchase's own row: one credit, not a replay and not a wrong item (IAP-001 and
    /// IAP-018 hold the same). The purchase's own row credited twice beside it is still a replay.
    @Test func aPromotionBonusRowBesideThePurchasesOwnRowIsNotASecondCreditWhileARepeatedOwnRowIs() throws {
        let at = Self.now - 5 * Self.day
        let world = try Self.world { w in
            for (tx, user, ownRows) in [("1000000000000951", "u-bonus", 1), ("1000000000000952", "u-bonus-twice", 2)] {
                w.purchase(tx, user: user, order: "o-\(user)", at: at)
                for row in 0..<ownRows {
                    w.credit("c-\(user)-\(row)", tx: tx, order: "o-\(user)", user: user, at: at + 60_000)
                }
                w.credit(
                    "c-\(user)-bonus", tx: tx, order: "o-\(user)", user: user, at: at + 60_000,
                    product: "promo.first_purchase_bonus", units: 100)
            }
        }
        try Self.expectJudged(
            world, "1000000000000951", .paidAndCredited, flagged: false, rules: ["IAP-001", "IAP-018"])
        try Self.expectJudged(world, "1000000000000952", .replayed, flagged: true, rules: ["IAP-001", "IAP-018"])
    }

    @Test func aSubscriptionPeriodRefundedAfterItEndedHasNothingToClawBackWhileARunningOneHas() throws {
        let world = try Self.world { w in
            for (tx, user, refundedDaysAfterStart) in [
                ("1000000000000901", "u-ended", Int64(40)), ("1000000000000902", "u-running", 10),
            ] {
                let at = Self.now - 60 * Self.day
                w.purchase(
                    tx, user: user, order: "o-\(user)", at: at, product: LookupTestWorld.monthly, price: 4990,
                    revokedAt: at + refundedDaysAfterStart * Self.day, expires: at + 30 * Self.day)
                w.credit(
                    "c-\(user)", tx: tx, order: "o-\(user)", user: user, at: at + 60_000,
                    product: LookupTestWorld.monthly,
                    units: 1)
            }
        }
        try Self.expectJudged(world, "1000000000000901", .refundedAfterPeriod, flagged: false, rules: ["IAP-015"])
        try Self.expectJudged(world, "1000000000000902", .refundedStillCredited, flagged: true, rules: ["IAP-015"])
    }

    @Test func aFreeOfferNoOneCreditedIsOwedNothingWhileAPaidOneIsMissing() throws {
        let world = try Self.world { w in
            w.purchase("1000000000001001", user: nil, order: nil, at: Self.now - 10 * Self.day, price: 0)
            w.purchase("1000000000001002", user: nil, order: nil, at: Self.now - 10 * Self.day, price: 990)
        }
        try Self.expectJudged(world, "1000000000001001", .freeNotCredited, flagged: false, rules: ["IAP-014"])
        try Self.expectJudged(world, "1000000000001002", .missingCredit, flagged: true, rules: ["IAP-014"])
    }

    @Test func aPaidTipTheCatalogCreditsNothingForIsOwedNothingWhileAnUncreditedPackIsMissing() throws {
        let world = try Self.world { w in
            w.purchase(
                "1000000000001051", user: "u-tip", order: "o-tip", at: Self.now - 10 * Self.day,
                product: LookupTestWorld.tip, price: 990)
            w.purchase("1000000000001052", user: "u-pack", order: "o-pack", at: Self.now - 10 * Self.day, price: 990)
        }
        try Self.expectJudged(world, "1000000000001051", .nothingToCredit, flagged: false, rules: ["IAP-014"])
        try Self.expectJudged(world, "1000000000001052", .missingCredit, flagged: true, rules: ["IAP-014"])
    }

    @Test func aCreditMovedFromAGuestAccountIsNotAMisCreditWhileOneTheGuestNeverHadIs() throws {
        let world = try Self.world { w in
            let at = Self.now - 10 * Self.day
            for (tx, guest) in [("1000000000001101", "u-guest"), ("1000000000001102", "u-payer")] {
                w.purchase(tx, user: guest, order: "o-\(guest)", at: at)
            }
            // The guest's credit is reversed as the merged account is credited; the payer was never credited.
            w.credit(
                "c-guest", tx: "1000000000001101", order: "o-u-guest", user: "u-guest", at: at + 60_000,
                reversedAt: at + 5 * Self.day, reason: "merge")
            w.credit("c-member", tx: "1000000000001101", order: nil, user: "u-member", at: at + 5 * Self.day + 1000)
            w.credit("c-other", tx: "1000000000001102", order: nil, user: "u-other", at: at + 60_000)
        }
        let merged = try Self.judged(world, "1000000000001101", rules: ["IAP-011", "IAP-012"])
        #expect(merged.verdict.code == .paidAndCredited)
        #expect(merged.verdict.lookAlike == "account-transfer")
        #expect(!merged.flagged)
        try Self.expectJudged(world, "1000000000001102", .misCredit, flagged: true, rules: ["IAP-011"])
    }

    @Test func aNonConsumableRestoredIntoANewAccountAfterTheOldCreditWasReversedIsATransferNotAMisCredit() throws {
        let world = try Self.world { w in
            let at = Self.now - 20 * Self.day
            // The account is deleted (its credit reversed), the customer signs up again and restores the purchase.
            w.purchase(
                "1000000000001201", user: "u-gone", order: "o-gone", at: at, product: LookupTestWorld.noAds, price: 2990
            )
            w.credit(
                "c-gone", tx: "1000000000001201", order: "o-gone", user: "u-gone", at: at + 60_000,
                product: LookupTestWorld.noAds, units: 1, reversedAt: at + 4 * Self.day, reason: "account-deleted")
            w.credit(
                "c-new", tx: "1000000000001201", order: nil, user: "u-new", at: at + 8 * Self.day,
                product: LookupTestWorld.noAds, units: 1)
            // Restored into a second account while the buyer's own credit still stands: sharing.
            w.purchase(
                "1000000000001202", user: "u-old", order: "o-old", at: at, product: LookupTestWorld.noAds, price: 2990)
            w.credit(
                "c-old", tx: "1000000000001202", order: "o-old", user: "u-old", at: at + 60_000,
                product: LookupTestWorld.noAds, units: 1)
            w.credit(
                "c-second", tx: "1000000000001202", order: nil, user: "u-second", at: at + 8 * Self.day,
                product: LookupTestWorld.noAds, units: 1)
            // A consumable no restore re-delivers, reversed and credited to another account days later.
            w.purchase("1000000000001203", user: "u-pack", order: "o-pack", at: at)
            w.credit(
                "c-pack", tx: "1000000000001203", order: "o-pack", user: "u-pack", at: at + 60_000,
                reversedAt: at + 4 * Self.day, reason: "manual")
            w.credit("c-moved", tx: "1000000000001203", order: nil, user: "u-moved", at: at + 8 * Self.day)
        }
        let moved = try Self.judged(world, "1000000000001201", rules: ["IAP-011", "IAP-012", "IAP-002"])
        #expect(moved.verdict.code == .paidAndCredited)
        #expect(moved.verdict.lookAlike == "account-transfer")
        #expect(!moved.flagged)
        try Self.expectJudged(world, "1000000000001202", .replayed, flagged: true, rules: ["IAP-011"])
        try Self.expectJudged(world, "1000000000001203", .misCredit, flagged: true, rules: ["IAP-011"])
    }

    @Test
    func anOriginalNonConsumableWhoseCreditWasReversedIsCreditedThroughItsCreditedRestoreWhileOneWithoutIsMissing()
        throws
    {
        let world = try Self.world { w in
            let at = Self.now - 20 * Self.day
            for (original, copy, user, copyCredited) in [
                ("1000000000001301", "1000000000001302", "u-gone", true),
                ("1000000000001311", "1000000000001312", "u-kept", false),
            ] {
                w.purchase(
                    original, user: user, order: "o-\(user)", at: at, product: LookupTestWorld.noAds, price: 2990,
                    legacy: true)
                w.credit(
                    "c-\(user)", tx: original, order: "o-\(user)", user: user, at: at + 60_000,
                    product: LookupTestWorld.noAds, units: 1, reversedAt: at + 4 * Self.day, reason: "account-deleted")
                // StoreKit 1's restore: a new transaction id under the original, submitted by the new account.
                w.purchase(
                    copy, user: nil, order: nil, at: at + 8 * Self.day, product: LookupTestWorld.noAds,
                    original: original, price: 2990, legacy: true, submittedBy: "u-new-\(user)")
                if copyCredited {
                    w.credit(
                        "c-new-\(user)", tx: copy, order: nil, user: "u-new-\(user)", at: at + 8 * Self.day + 5000,
                        product: LookupTestWorld.noAds, units: 1)
                }
            }
        }
        let original = try Self.judged(world, "1000000000001301", rules: ["IAP-014"])
        #expect(original.verdict.code == .paidAndCredited)
        #expect(!original.flagged)
        let copy = try Self.judged(world, "1000000000001302", rules: ["IAP-011", "IAP-012", "IAP-014"])
        #expect(copy.verdict.code == .paidAndCredited)
        #expect(!copy.flagged)
        try Self.expectJudged(world, "1000000000001311", .missingCredit, flagged: true, rules: ["IAP-014"])
    }

    @Test func aSubscriptionPeriodWhoseCreditWasReversedAfterItEndedWasCreditedWhileOneReversedMidPeriodIsMissing()
        throws
    {
        let world = try Self.world { w in
            let at = Self.now - 60 * Self.day
            for (tx, user, reversedDaysAfterStart) in [
                ("1000000000001401", "u-ended", Int64(35)), ("1000000000001402", "u-cut", 10),
            ] {
                w.purchase(
                    tx, user: user, order: "o-\(user)", at: at, product: LookupTestWorld.monthly, price: 4990,
                    expires: at + 30 * Self.day)
                w.credit(
                    "c-\(user)", tx: tx, order: "o-\(user)", user: user, at: at + 60_000,
                    product: LookupTestWorld.monthly, units: 30, reversedAt: at + reversedDaysAfterStart * Self.day,
                    reason: "account-deleted")
            }
        }
        try Self.expectJudged(world, "1000000000001401", .paidAndCredited, flagged: false, rules: ["IAP-014"])
        try Self.expectJudged(world, "1000000000001402", .missingCredit, flagged: true, rules: ["IAP-014"])
    }

    @Test func aSubscriptionCreditReversedMinutesBeforeTheExpiryWithinTheClockSkewWasCreditedForTheWholePeriod() throws
    {
        let world = try Self.world { w in
            let at = Self.now - 60 * Self.day
            let expires = at + 30 * Self.day
            for (tx, user, minutesEarly) in [
                ("1000000000001411", "u-skew", Int64(10)), ("1000000000001412", "u-early", 20),
            ] {
                w.purchase(
                    tx, user: user, order: "o-\(user)", at: at, product: LookupTestWorld.monthly, price: 4990,
                    expires: expires)
                w.credit(
                    "c-\(user)", tx: tx, order: "o-\(user)", user: user, at: at + 60_000,
                    product: LookupTestWorld.monthly, units: 30, reversedAt: expires - minutesEarly * 60_000,
                    reason: "expired")
            }
        }
        try Self.expectJudged(world, "1000000000001411", .paidAndCredited, flagged: false, rules: ["IAP-014"])
        try Self.expectJudged(world, "1000000000001412", .missingCredit, flagged: true, rules: ["IAP-014"])
    }

    @Test func aBonusRowWithoutAProductBesideTheExactRowIsPaidAndCreditedWhileAFullSecondRowIsReplayed() throws {
        let world = try Self.world { w in
            let at = Self.now - 10 * Self.day
            for (tx, user, bonus) in [("1000000000001421", "u-bonus", Int64(10)), ("1000000000001422", "u-twice", 100)]
            {
                w.purchase(tx, user: user, order: "o-\(user)", at: at)
                w.credit("c-\(user)", tx: tx, order: "o-\(user)", user: user, at: at + 60_000)
                w.credit(
                    "c-\(user)-b", tx: tx, order: "o-\(user)", user: user, at: at + 61_000, product: nil, units: bonus)
            }
        }
        try Self.expectJudged(
            world, "1000000000001421", .paidAndCredited, flagged: false, rules: ["IAP-001", "IAP-019"])
        try Self.expectJudged(world, "1000000000001422", .replayed, flagged: true, rules: ["IAP-001", "IAP-019"])
    }

    /// One bonus row of an item (or without one) beside the purchase is a promotion; the same bonus written again
    /// on later days is a replay of the purchase (IAP-001 2.8), whichever way the bonus is written.
    @Test func aBonusRowWrittenAgainOnLaterDaysIsAReplayedPurchase() throws {
        let world = try Self.world { w in
            let at = Self.now - 10 * Self.day
            for (tx, user, product) in [
                ("1000000000001451", "u-bonus-item", Optional("promo.first_purchase_bonus")),
                ("1000000000001452", "u-bonus-bare", nil),
            ] {
                w.purchase(tx, user: user, order: "o-\(user)", at: at)
                w.credit("c-\(user)", tx: tx, order: "o-\(user)", user: user, at: at + 60_000)
                for day in Int64(1)...3 {
                    w.credit(
                        "c-\(user)-\(day)", tx: tx, order: "o-\(user)", user: user, at: at + day * Self.day,
                        product: product, units: 10)
                }
            }
        }
        try Self.expectJudged(world, "1000000000001451", .replayed, flagged: true, rules: ["IAP-001"])
        try Self.expectJudged(world, "1000000000001452", .replayed, flagged: true, rules: ["IAP-001"])
    }

    /// A credit naming another store's payment id (a web checkout's `pi_…` in a shared ledger) that no copy from
    /// Apple or the app ever carried is unconfirmed, as IAP-020 reports it, and says the id is not Apple's; it
    /// is not called forged. The same id on a copy the app submitted is a forger's mark.
    @Test func aCreditOfANonAppleIdNeverSeenFromAppleIsUnconfirmedNotForged() throws {
        let world = try Self.world { w in
            w.credit("c-web", tx: "pi_3PqRsT2eZvKYlo2C", order: "web-0001", user: "u-web", at: Self.now - Self.day)
        }
        try Self.expectJudged(world, "pi_3PqRsT2eZvKYlo2C", .unverifiable, flagged: true, rules: ["IAP-020"])
        let verdict = try Self.judged(world, "pi_3PqRsT2eZvKYlo2C", rules: ["IAP-020"]).verdict
        #expect(verdict.details.contains { $0.contains("not an App Store transaction id") }, "\(verdict.details)")
        #expect(!verdict.headline.lowercased().contains("forged"))
    }

    /// Units and quantities are attacker-controlled: the largest 64-bit counts (a subscription credited
    /// `Int64.max` days, two such rows of one pack, a clawback of `Int64.min`, a forged quantity) are judged,
    /// never trapped on.
    @Test func extremeUnitsAndQuantitiesAreJudgedWithoutTrapping() throws {
        let at = Self.now - 20 * Self.day
        let world = try Self.world { w in
            w.purchase(
                "1000000000001461", user: "u-max-sub", order: "o-max-sub", at: at, product: LookupTestWorld.monthly,
                price: 4990, expires: at + 30 * Self.day)
            w.credit(
                "c-max-sub", tx: "1000000000001461", order: "o-max-sub", user: "u-max-sub", at: at + 60_000,
                product: LookupTestWorld.monthly, units: .max)
            w.credit(
                "c-max-sub-2", tx: "1000000000001461", order: "o-max-sub", user: "u-max-sub", at: at + 61_000,
                product: LookupTestWorld.monthly, units: .max)
            w.purchase("1000000000001462", user: "u-max-pack", order: "o-max-pack", at: at, quantity: .max)
            for (id, units) in [("c-a", Int64.max), ("c-b", .max), ("c-c", .min)] {
                w.credit(
                    id, tx: "1000000000001462", order: "o-max-pack", user: "u-max-pack", at: at + 60_000, units: units)
            }
        }
        for tx in ["1000000000001461", "1000000000001462"] {
            let result = try world.lookup(tx, kind: .transaction)
            #expect(result.verdicts.contains { $0.transactionID == tx })
            #expect(!LookupTextRenderer().render(result).isEmpty)
        }
    }

    @Test func renewalsCreditedThroughTheirOriginalTransactionArePaidAndCreditedWhileTooFewDaysAreMissing() throws {
        let world = try Self.world { w in
            let start = Self.now - 70 * Self.day
            for (family, user, days) in [("100000000000143", "u-keyed", Int64(60)), ("100000000000144", "u-short", 30)]
            {
                let original = family + "1"
                w.purchase(
                    original, user: user, order: "o-\(user)", at: start, product: LookupTestWorld.monthly, price: 4990,
                    expires: start + 30 * Self.day)
                w.purchase(
                    family + "2", user: nil, order: nil, at: start + 30 * Self.day, product: LookupTestWorld.monthly,
                    original: original, price: 4990, reason: "RENEWAL", expires: start + 60 * Self.day)
                w.credit(
                    "c-\(user)", tx: original, order: "o-\(user)", user: user, at: start + 60_000,
                    product: LookupTestWorld.monthly, units: days)
            }
        }
        try Self.expectJudged(world, "1000000000001432", .paidAndCredited, flagged: false, rules: ["IAP-014"])
        try Self.expectJudged(world, "1000000000001442", .missingCredit, flagged: true, rules: ["IAP-014"])
    }
}
