import Foundation
import Testing

@testable import IAPGuard

@Suite("Lookup verdicts")
struct LookupVerdictTests {
    nonisolated(unsafe) static let world: Result<LookupTestWorld, any Error> = Result { try LookupTestWorld.standard() }

    func world() throws -> LookupTestWorld { try Self.world.get() }

    func verdict(_ id: String, kind: IDKind = .transaction) throws -> ClaimVerdict {
        let result = try world().lookup(id, kind: kind)
        #expect(result.found)
        return try #require(result.verdicts.first { $0.transactionID == id })
    }

    @Test func paidAndCreditedNamesTheAccountAndTime() throws {
        let v = try verdict("1000000000000001")
        #expect(v.code == .paidAndCredited)
        #expect(v.paidBy == "u-ok" && v.creditedTo == ["u-ok"])
        #expect(v.lookAlike == nil && v.action == nil)
        #expect(v.headline.contains("credited to u-ok on 2026-02-19"))
    }

    @Test func paidButNeverCreditedSaysWhatToGrant() throws {
        let v = try verdict("1000000000000002")
        #expect(v.code == .missingCredit)
        #expect(v.action == "Grant 100 units of com.example.coins.pack100 to u-miss for transaction 1000000000000002.")
    }

    @Test func recentUncreditedPurchaseIsPendingWithinGrace() throws {
        #expect(try verdict("1000000000000003").code == .pendingCredit)
    }

    @Test func creditToAnotherAccountIsMisCreditWithBothAccounts() throws {
        let v = try verdict("1000000000000004")
        #expect(v.code == .misCredit)
        #expect(v.paidBy == "u-payer" && v.creditedTo == ["u-other"])
        #expect(v.action?.contains("reverse credit c-mis of u-other") == true)
    }

    @Test func oneTransactionCreditedTwiceIsReplayedNotChargedTwice() throws {
        let result = try world().lookup("1000000000000005")
        let v = try #require(result.verdicts.first)
        #expect(v.code == .replayed)
        #expect(v.headline.hasPrefix("Replayed, not charged twice"))
        #expect(v.orderIDs == ["o-rep1", "o-rep2"])
        #expect(!result.verdicts.contains { $0.code == .chargedTwice })
        #expect(result.findings.contains { $0.ruleID == "IAP-001" && $0.isActive })
    }

    @Test func twoRealPurchasesMinutesApartAreChargedTwice() throws {
        let result = try world().lookup("1000000000000007")
        #expect(result.verdicts.first?.code == .paidAndCredited)
        let twice = try #require(result.verdicts.first { $0.code == .chargedTwice })
        #expect(twice.transactionID == "1000000000000006" && twice.relatedTransactionIDs == ["1000000000000007"])
        #expect(twice.paidBy == "u-twice")
        #expect(twice.headline.contains("5 min apart"))
    }

    @Test func refundWithCreditReversedIsClawedBack() throws {
        let v = try verdict("1000000000000008")
        #expect(v.code == .refundedClawedBack)
        #expect(v.details.contains { $0.contains("c-ref") && $0.contains("refund") })
    }

    @Test func refundWithStandingCreditIsStillCreditedWithAction() throws {
        let result = try world().lookup("1000000000000009")
        let v = try #require(result.verdicts.first)
        #expect(v.code == .refundedStillCredited)
        #expect(v.action == "Claw back 100 units from u-keep.")
        #expect(result.findings.contains { $0.ruleID == "IAP-015" })
    }

    @Test func aProratedRefundWhoseRowWasEditedDownToTheKeptShareIsClawedBack() throws {
        var w = try LookupTestWorld()
        let at = LookupTestWorld.now - 20 * LookupTestWorld.day
        let refunded = at + 10 * LookupTestWorld.day
        for (tx, units) in [("1000000000005001", Int64(50)), ("1000000000005002", 100)] {
            w.purchase(tx, user: "u-pro", order: "o-\(tx)", at: at, revokedAt: refunded, refundedShare: 50_000)
            w.credit("c-\(tx)", tx: tx, order: "o-\(tx)", user: "u-pro", at: at + 60_000, units: units)
        }
        try w.commit(runRules: false)
        let edited = try #require(try w.lookup("1000000000005001", kind: .transaction).verdicts.first)
        #expect(edited.code == .refundedClawedBack)
        #expect(
            edited.headline.hasSuffix("50 of 100 units stand, no more than the share the refund left the customer."))
        let whole = try #require(try w.lookup("1000000000005002", kind: .transaction).verdicts.first)
        #expect(whole.code == .refundedStillCredited)
        #expect(whole.action == "Claw back 50 units from u-pro.")
    }

    @Test func aClawbackLedgerRowCountsAgainstWhatStands() throws {
        var w = try LookupTestWorld()
        let at = LookupTestWorld.now - 20 * LookupTestWorld.day
        let refunded = at + 10 * LookupTestWorld.day
        // 1: a 50 % prorated refund, the refunded half taken back by a ledger row; 2: a full refund, 40 taken back.
        for (tx, share, back) in [("1000000000009001", Int64(50_000), Int64(50)), ("1000000000009002", nil, 40)] {
            w.purchase(tx, user: "u-led", order: "o-\(tx)", at: at, revokedAt: refunded, refundedShare: share)
            w.credit("c-\(tx)", tx: tx, order: "o-\(tx)", user: "u-led", at: at + 60_000)
            w.credit(
                "k-\(tx)", tx: tx, order: nil, user: "u-led", at: refunded + 3_600_000, units: -back, reason: "refund")
        }
        try w.commit(runRules: false)
        let prorated = try #require(try w.lookup("1000000000009001", kind: .transaction).verdicts.first)
        #expect(prorated.code == .refundedClawedBack)
        #expect(prorated.details.contains { $0.contains("Ledger row k-1000000000009001 took back 50 units") })
        let full = try #require(try w.lookup("1000000000009002", kind: .transaction).verdicts.first)
        #expect(full.code == .refundedStillCredited)
        #expect(full.action == "Claw back 60 units from u-led.")
    }

    @Test func aProratedRefundsKeptShareRoundsUpToAWholeUnit() throws {
        var w = try LookupTestWorld()
        let at = LookupTestWorld.now - 20 * LookupTestWorld.day
        // 100 units, 50.5 % refunded: 49.5 units are the customer's, so 50 standing is their due and 51 is not.
        for (tx, stands) in [("1000000000009101", Int64(50)), ("1000000000009102", 51)] {
            w.purchase(
                tx, user: "u-half", order: "o-\(tx)", at: at, revokedAt: at + LookupTestWorld.day, refundedShare: 50_500
            )
            w.credit("c-\(tx)", tx: tx, order: "o-\(tx)", user: "u-half", at: at + 60_000, units: stands)
        }
        try w.commit(runRules: false)
        let due = try #require(try w.lookup("1000000000009101", kind: .transaction).verdicts.first)
        #expect(due.code == .refundedClawedBack)
        let over = try #require(try w.lookup("1000000000009102", kind: .transaction).verdicts.first)
        #expect(over.code == .refundedStillCredited)
        #expect(ClaimVerdictJudge.keptShare(of: 1, refundedMilli: 50_000) == 0)
    }

    @Test func aSubscriptionMovedToANewAccountThatRestoredItIsPaidAndCredited() throws {
        var w = try LookupTestWorld()
        let day = LookupTestWorld.day
        let start = LookupTestWorld.now - 70 * day
        let monthly = LookupTestWorld.monthly
        // 1…: moved once (the old account is credited nothing after); 2…: credited back to the old account later.
        for family in ["1000000000006", "1000000000007"] {
            let token = "\(family == "1000000000006" ? "6" : "7")0000000-0000-4000-8000-000000000000"
            let (old, new) = ("u-old-\(family.suffix(1))", "u-new-\(family.suffix(1))")
            let original = family + "001"
            w.purchase(original, user: old, order: "o-\(original)", at: start, product: monthly, token: token)
            w.credit(
                "c-\(original)", tx: original, order: "o-\(original)", user: old, at: start + 60_000, product: monthly,
                units: 1)
            // the new account restores the subscription, then its renewals are credited there
            w.purchase(original, user: nil, order: nil, at: start, product: monthly, token: token, submittedBy: new)
            for (n, holder) in [(2, new), (3, family == "1000000000006" ? new : old)] {
                let renewal = family + "00\(n)"
                let at = start + Int64(n - 1) * 30 * day
                w.purchase(renewal, user: nil, order: nil, at: at, product: monthly, original: original, token: token)
                w.credit(
                    "c-\(renewal)", tx: renewal, order: nil, user: holder, at: at + 60_000, product: monthly, units: 1)
            }
        }
        try w.commit(runRules: false)
        let moved = try #require(try w.lookup("1000000000006002", kind: .transaction).verdicts.first)
        #expect(moved.code == .paidAndCredited && moved.lookAlike == "subscription-moved")
        #expect(moved.paidBy == "u-old-6" && moved.creditedTo == ["u-new-6"])
        let back = try #require(try w.lookup("1000000000007002", kind: .transaction).verdicts.first)
        #expect(back.code == .misCredit)
    }

    @Test func sandboxPurchaseIsNoMoneyAndFlagsNonTesters() throws {
        let outsider = try verdict("1000000000000010")
        #expect(outsider.code == .sandbox)
        #expect(outsider.action?.contains("u-sand") == true)
        let tester = try verdict("1000000000000011")
        #expect(tester.code == .sandbox && tester.lookAlike == "tester-sandbox" && tester.action == nil)
    }

    @Test func forgeryMarkersAndFailedCopiesAreForged() throws {
        let marker = try verdict("com.urus.iap.fake1")
        #expect(marker.code == .forged)
        #expect(marker.headline.contains("urus-marker"))
        let failed = try verdict("1000000000000012")
        #expect(failed.code == .forged)
        #expect(failed.details.contains { $0.contains("chain-untrusted") })
        #expect(failed.action?.contains("u-forge2") == true)
    }

    @Test func aGenuineOtherAppTransactionIsWrongAppNotForged() throws {
        let v = try verdict("1000000000000090")
        #expect(v.code == .wrongApp, "\(v.headline)")
        #expect(v.headline.contains("com.cheap.app"))
        #expect(v.action?.contains("u-foreign") == true)
    }

    @Test func anotherAppsPurchaseNobodyWasCreditedForIsRefusedNotAProblem() throws {
        #expect(try verdict("1000000000000090").problem)
        var w = try LookupTestWorld()
        w.purchase(
            "1000000000008001", user: "u-try", order: "o-try", at: LookupTestWorld.now - 2 * LookupTestWorld.day,
            bundle: "com.cheap.app")
        try w.commit(runRules: false)
        let refused = try #require(try w.lookup("1000000000008001", kind: .transaction).verdicts.first)
        #expect(refused.code == .wrongApp && refused.creditedTo.isEmpty)
        #expect(!refused.problem)
    }

    @Test func aCreditedProductOutsideTheCatalogIsNotPaidAndCredited() throws {
        let v = try verdict("1000000000000091")
        #expect(v.code == .creditedWrongItem, "\(v.headline)")
        #expect(v.code.isProblem)
    }

    @Test func creditWithoutAppleConfirmationIsUnverifiable() throws {
        let v = try verdict("1000000000000013")
        #expect(v.code == .unverifiable)
        #expect(v.creditedTo == ["u-unconf"])
    }

    @Test func orderWithoutTransactionIsNotPaid() throws {
        let result = try world().lookup("o-nopay")
        #expect(result.query.matches.map(\.kind) == [.order])
        #expect(result.verdicts.map(\.code) == [.orderNotPaid])
    }

    @Test func familySharedCopyIsNotAMisCredit() throws {
        let v = try verdict("1000000000000021")
        #expect(v.code == .paidAndCredited)
        #expect(v.lookAlike == "family-sharing")
        #expect(v.details.contains { $0.contains("bought by u-org") })
    }

    @Test func subscriptionRenewalIsNotAChargeTwice() throws {
        let result = try world().lookup("1000000000000031")
        #expect(result.verdicts.map(\.code) == [.paidAndCredited])
        #expect(result.verdicts.first?.lookAlike == "subscription-renewal")
        #expect(result.verdicts.first?.paidBy == "u-sub")
    }

    @Test func restoreOnANewDeviceBySameUserIsBenign() throws {
        let result = try world().lookup("1000000000000041")
        #expect(result.verdicts.map(\.code) == [.paidAndCredited])
        #expect(result.verdicts.first?.lookAlike == "restore")
    }

    @Test func restoreOntoAnotherAccountIsMisCredit() throws {
        let v = try verdict("1000000000000051")
        #expect(v.code == .misCredit)
        #expect(v.paidBy == "u-a" && v.creditedTo == ["u-b"])
    }

    @Test func originalIdFindsTheWholeFamily() throws {
        let result = try world().lookup("1000000000000030", kind: .original)
        #expect(Set(result.verdicts.compactMap(\.transactionID)) == ["1000000000000030", "1000000000000031"])
        #expect(result.verdicts.allSatisfy { $0.code == .paidAndCredited })
    }

    @Test func ambiguousNumberSaysWhichKindsMatched() throws {
        let result = try world().lookup("1000000000000020")
        #expect(result.query.kindsTried == IDKind.priority)
        #expect(result.query.matches.map(\.kind) == [.transaction, .original])
    }

    @Test func tokenLookupIsCaseInsensitive() throws {
        let result = try world().lookup("bbbbbbbb-0000-4000-8000-000000000002")
        #expect(result.query.matches.map(\.kind) == [.token])
        #expect(result.verdicts.count == 2)
    }

    @Test func userLookupHasProfileSpendAndRefunds() throws {
        let result = try world().lookup("u-cons", kind: .user)
        let profile = try #require(result.users.first)
        #expect(profile.purchaseCount == 3)
        #expect(profile.refundCount == 2)
        // 3 × 39.99 TRY at 40 TRY per EUR and 1 USD per EUR.
        #expect(profile.spendRef == 3000)
        #expect(profile.storefronts == ["TUR"])
        #expect(
            result.verdicts.map(\.code).sorted { $0.rawValue < $1.rawValue } == [
                .paidAndCredited, .refundedClawedBack, .refundedClawedBack,
            ])
    }
}

/// A verdict that is no problem by itself never hides an active finding on the same purchase.
@Suite struct FlaggedVerdictTests {
    static func finding(_ rule: String, level: String, tx: String, status: String = "new") -> LookupFinding {
        LookupFinding(
            findingID: "F-\(rule)", ruleID: rule, ruleTitle: rule, level: level, status: status, outcome: "hit",
            summary: "\(rule) summary", transactionID: tx, orderID: nil, userID: nil, amountRef: nil, firstRunID: 1,
            lastSeenRunID: 1)
    }

    @Test func aBenignVerdictNamedByAnActiveFindingIsAProblemAndSaysWhich() {
        var paid = ClaimVerdict(code: .paidAndCredited, headline: "Paid and credited.", transactionID: "1")
        paid.note(findings: [
            Self.finding("IAP-009", level: "medium", tx: "1"), Self.finding("IAP-008", level: "high", tx: "1"),
            Self.finding("IAP-004", level: "informational", tx: "1"), Self.finding("IAP-001", level: "high", tx: "2"),
            Self.finding("IAP-003", level: "high", tx: "1", status: "resolved"),
        ])
        #expect(paid.problem)
        #expect(paid.flaggedBy == ["IAP-008 (high): IAP-008 summary", "IAP-009 (medium): IAP-009 summary"])
        var quiet = ClaimVerdict(code: .sandbox, headline: "Sandbox.", transactionID: "3")
        quiet.note(findings: [Self.finding("IAP-017", level: "informational", tx: "3")])
        #expect(!quiet.problem && quiet.flaggedBy.isEmpty)
        var owed = ClaimVerdict(code: .missingCredit, headline: "Owed.", transactionID: "4")
        owed.note(findings: [Self.finding("IAP-014", level: "medium", tx: "4")])
        #expect(owed.problem && owed.flaggedBy.isEmpty)
    }
}

/// A customer's spend counts what they paid, whichever record says it.
@Suite struct UserSpendTests {
    @Test func aStoreKit1PurchaseCountsItsOrdersPriceInTheUsersSpend() throws {
        var w = try LookupTestWorld()
        let at = LookupTestWorld.now - 3 * LookupTestWorld.day
        w.purchase("1000000000003001", user: "u-legacy", order: "o-legacy", at: at, legacy: true, applePrice: false)
        w.credit("c-legacy", tx: "1000000000003001", order: "o-legacy", user: "u-legacy", at: at + 60_000)
        try w.commit(runRules: false)
        let profile = try #require(try w.lookup("u-legacy", kind: .user).users.first)
        #expect(profile.purchaseCount == 1)
        #expect(profile.spendRef == 990)
        #expect(profile.unconvertedPurchases == 0)
    }
}

/// A customer's purchases are the ones they paid for.
@Suite struct UserPurchasesTests {
    @Test func anotherAccountsPurchaseInASharedDevicesReceiptIsNotTheUsersPurchase() throws {
        var w = try LookupTestWorld()
        let at = LookupTestWorld.now - 9 * LookupTestWorld.day
        // A bought noads; B's later receipt on the same device carries A's purchase next to B's own.
        w.purchase(
            "1000000000010001", user: "u-sis-a", order: "o-sis-a", at: at, product: LookupTestWorld.noAds, legacy: true)
        w.credit(
            "c-sis-a", tx: "1000000000010001", order: "o-sis-a", user: "u-sis-a", at: at + 60_000,
            product: LookupTestWorld.noAds, units: 1)
        w.purchase(
            "1000000000010001", user: nil, order: nil, at: at, product: LookupTestWorld.noAds, legacy: true,
            submittedBy: "u-sis-b")
        w.purchase("1000000000010002", user: "u-sis-b", order: "o-sis-b", at: at + LookupTestWorld.day, legacy: true)
        w.credit(
            "c-sis-b", tx: "1000000000010002", order: "o-sis-b", user: "u-sis-b", at: at + LookupTestWorld.day + 60_000)
        try w.commit(runRules: false)
        let b = try #require(try w.lookup("u-sis-b", kind: .user).users.first)
        #expect(b.purchaseCount == 1)
        #expect(b.spendRef == 990)
        let a = try #require(try w.lookup("u-sis-a", kind: .user).users.first)
        #expect(a.purchaseCount == 1)
    }
}

/// What support is told about a purchase in a test environment depends on whether Apple signed it.
@Suite struct TestEnvironmentVerdictTests {
    @Test func anXcodePurchaseIsNeverCalledGenuineWhileASandboxOneIs() throws {
        var w = try LookupTestWorld()
        let at = LookupTestWorld.now - 3 * LookupTestWorld.day
        for (tx, environment) in [("3", "Xcode"), ("1000000000004001", "Sandbox")] {
            w.purchase(
                tx, user: "u-dev", order: nil, at: at, environment: environment,
                outcome: .failed(.wrongEnvironment, "\(environment) is not allowed"))
        }
        try w.commit(runRules: false)
        let xcode = try #require(try w.lookup("3", kind: .transaction).verdicts.first)
        #expect(xcode.code == .sandbox)
        #expect(xcode.headline.contains("claims to be an Xcode test purchase"))
        #expect(!xcode.headline.contains("genuine"))
        let sandbox = try #require(try w.lookup("1000000000004001", kind: .transaction).verdicts.first)
        #expect(sandbox.code == .sandbox && sandbox.headline.contains("is a genuine Sandbox purchase"))
    }
}
