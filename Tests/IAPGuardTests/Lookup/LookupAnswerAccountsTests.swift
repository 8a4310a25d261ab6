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
    /// which was credited too. u-lost bought noads; its restore into u-third was credited while u-lost held it,
    /// and u-lost's credit was reversed only later (two accounts held it at once: not a move, which a reversal
    /// before the restore's credit would be).
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
                    product: LookupTestWorld.noAds, units: 1, reversedAt: reversed ? now - 5 * day : nil,
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

    /// The backend credited from Apple's ONE_TIME_CHARGE notification (the credit names the transaction and the
    /// order); the order the app created stays `created` without a transaction id. Beside it, an order credited
    /// with no transaction anywhere.
    static func webhookWorld() throws -> LookupTestWorld {
        try world { w in
            let token = "FFFFFFFF-0000-4000-8000-000000000001"
            w.account("u-hook", token: token)
            w.order(
                "o-hook", user: "u-hook", tx: nil, product: LookupTestWorld.pack100, at: now - 3 * day,
                status: "created", token: token)
            w.purchase("1000000000001501", user: nil, order: nil, at: now - 3 * day + 9000, token: token)
            w.credit("c-hook", tx: "1000000000001501", order: "o-hook", user: "u-hook", at: now - 3 * day + 14_000)
            w.order(
                "o-ghost", user: "u-ghost", tx: nil, product: LookupTestWorld.pack100, at: now - 3 * day,
                status: "created")
            w.credit("c-ghost", tx: nil, order: "o-ghost", user: "u-ghost", at: now - 3 * day + 14_000)
        }
    }

    @Test func anOrderWithoutATransactionIsJudgedByTheVerifiedTransactionItsCreditNames() throws {
        let world = try Self.webhookWorld()
        let result = try world.lookup("o-hook", kind: .order)
        #expect(result.verdicts.count == 1)
        let v = try #require(result.verdicts.first)
        #expect(v.code == .paidAndCredited, "\(v.headline)")
        #expect(v.transactionID == "1000000000001501")
        #expect(v.orderIDs.contains("o-hook"))
        #expect(v.details.contains { $0.contains("o-hook") && $0.contains("c-hook") })
        #expect(!result.verdicts.contains { $0.code == .unverifiable })
    }

    @Test func anOrderCreditedWithoutAnyTransactionIsStillUnverifiable() throws {
        let world = try Self.webhookWorld()
        let result = try world.lookup("o-ghost", kind: .order)
        #expect(result.verdicts.map(\.code) == [.unverifiable])
        #expect(result.verdicts.first?.headline.contains("without any Apple transaction") == true)
    }

    /// A family member's own Family Sharing copies (their own original id, no order), credited each period:
    /// the member did not buy them.
    @Test func aFamilyMembersRenewalNamesTheMemberOnlyAsTheOneItIsSharedWith() throws {
        let world = try Self.world { w in
            w.purchase(
                "1000000000001601", user: "u-organiser", order: "o-organiser", at: Self.now - 40 * Self.day,
                product: LookupTestWorld.monthly, price: 9990, expires: Self.now - 10 * Self.day)
            for (tx, at) in [
                ("1000000000001611", Self.now - 40 * Self.day), ("1000000000001612", Self.now - 10 * Self.day),
            ] {
                w.purchase(
                    tx, user: nil, order: nil, at: at, product: LookupTestWorld.monthly, original: "1000000000001611",
                    price: 9990, ownership: "FAMILY_SHARED", reason: tx.hasSuffix("1") ? "PURCHASE" : "RENEWAL",
                    expires: at + 30 * Self.day, submittedBy: "u-member")
                w.credit(
                    "c-\(tx)", tx: tx, order: nil, user: "u-member", at: at + 60_000,
                    product: LookupTestWorld.monthly, units: 30)
            }
        }
        let v = try #require(try world.lookup("1000000000001612", kind: .transaction).verdicts.first)
        #expect(v.code == .paidAndCredited)
        #expect(v.lookAlike == "family-sharing")
        #expect(v.details.contains { $0.contains("shared with u-member") })
        #expect(!v.details.contains { $0.contains("bought by u-member") })
        #expect(v.paidBy != "u-member")
    }
}
