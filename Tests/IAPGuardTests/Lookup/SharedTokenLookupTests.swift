import Foundation
import Testing

@testable import IAPGuard

/// "My purchase went to another account" when several accounts order with one app account token that no
/// account record names (IAP-013's token farm): each purchase was paid by the account that ordered it and
/// credited to it, so the lookup says the token is shared rather than handing the goods to the token's first
/// user; a token the accounts source gives another account is still that account's (IAP-012's mis-credit).
@Suite struct SharedTokenLookupTests {
    static let day = LookupTestWorld.day
    static let now = LookupTestWorld.now
    static let farmToken = "ABABABAB-0000-4000-8000-000000000007"
    static let ownerToken = "CDCDCDCD-0000-4000-8000-000000000008"

    /// u-first, then u-second and u-third order with the farm token, each paying from their own Apple Account and
    /// credited; the accounts source gives u-first and u-second other tokens. u-victim's token (from the
    /// accounts source) is on a transaction redeemed and credited through u-thief's order.
    static func world() throws -> LookupTestWorld {
        var w = try LookupTestWorld()
        w.account("u-first", token: "11111111-0000-4000-8000-00000000000a")
        w.account("u-second", token: "22222222-0000-4000-8000-00000000000b")
        w.account("u-victim", token: ownerToken)
        w.account("u-thief", token: "33333333-0000-4000-8000-00000000000c")
        for (index, user) in ["u-first", "u-second", "u-third"].enumerated() {
            let tx = "100000000000300\(index + 1)"
            let at = now - Int64(10 - index) * day
            w.purchase(
                tx, user: user, order: "o-\(user)", at: at, token: farmToken,
                appleAccount: "70500000000000300\(index + 1)")
            w.credit("c-\(user)", tx: tx, order: "o-\(user)", user: user, at: at + 60_000)
        }
        w.purchase(
            "1000000000003011", user: "u-thief", order: "o-thief", at: now - 5 * day, token: ownerToken,
            appleAccount: "705000000000003011")
        w.credit("c-thief", tx: "1000000000003011", order: "o-thief", user: "u-thief", at: now - 5 * day + 60_000)
        try w.commit(runRules: true)
        return w
    }

    @Test func aPurchaseOnASharedTokenIsTokenSharedPaidByTheOrderingAccountNotAMisCredit() throws {
        let world = try Self.world()
        for (tx, user) in [("1000000000003002", "u-second"), ("1000000000003003", "u-third")] {
            let judged = try LookAlikeLookupTests.judged(world, tx, rules: ["IAP-013"])
            let v = judged.verdict
            #expect(v.code == .tokenShared, "\(v.headline)")
            #expect(v.code.isProblem && judged.flagged)
            #expect(v.paidBy == user && v.creditedTo == [user])
            #expect(v.headline.contains("u-first") && v.headline.contains(user), "\(v.headline)")
            #expect(v.details.contains { $0.contains("IAP-013") }, "\(v.details)")
            #expect(v.details.contains { $0.contains("Apple Account 70500000000000300") }, "\(v.details)")
            #expect(v.action?.contains("Credit u-first") != true, "\(v.action ?? "")")
            #expect(v.action?.contains("reverse") != true, "\(v.action ?? "")")
        }
        // The same verdict through the token and the account.
        let byToken = try world.lookup(Self.farmToken.lowercased(), kind: .token)
        #expect(byToken.verdicts.map(\.code) == [.paidAndCredited, .tokenShared, .tokenShared])
        let byUser = try world.lookup("u-third", kind: .user)
        #expect(byUser.verdicts.first { $0.transactionID == "1000000000003003" }?.code == .tokenShared)
    }

    @Test func theTokensFirstAccountsOwnPurchaseIsPaidAndCreditedNotingTheSharing() throws {
        let world = try Self.world()
        let judged = try LookAlikeLookupTests.judged(world, "1000000000003001", rules: ["IAP-013"])
        #expect(judged.verdict.code == .paidAndCredited)
        #expect(judged.verdict.paidBy == "u-first")
        #expect(judged.verdict.details.contains { $0.contains("u-second") && $0.contains("u-third") })
        #expect(!judged.flagged)
        // The other accounts' purchases on the token are not the first account's spend.
        let profile = try #require(try world.lookup("u-first", kind: .user).users.first)
        #expect(profile.purchaseCount == 1)
    }

    @Test func aTokenTheAccountsSourceGivesAnotherAccountIsStillAMisCredit() throws {
        let world = try Self.world()
        let judged = try LookAlikeLookupTests.judged(world, "1000000000003011", rules: ["IAP-012"])
        #expect(judged.verdict.code == .misCredit)
        #expect(judged.verdict.paidBy == "u-victim" && judged.verdict.creditedTo == ["u-thief"])
        #expect(judged.verdict.action == "Credit u-victim and reverse credit c-thief of u-thief.")
        #expect(judged.flagged)
    }

    /// A client that sets one token per device: the accounts source gives u-sister and u-brother the same token.
    /// u-sister pays and submits the purchase; u-brother is credited. u-brother's own submitted purchase is his.
    @Test func aTokenTheAccountsSourceGivesTwoAccountsNamesTheHolderThatSubmittedThePurchase() throws {
        var w = try LookupTestWorld()
        let device = "EFEFEFEF-0000-4000-8000-000000000009"
        w.account("u-sister", token: device)
        w.account("u-brother", token: device)
        w.purchase(
            "1000000000003021", user: nil, order: nil, at: Self.now - 6 * Self.day, token: device,
            submittedBy: "u-sister")
        w.credit("c-3021", tx: "1000000000003021", order: nil, user: "u-brother", at: Self.now - 6 * Self.day + 60_000)
        w.purchase(
            "1000000000003022", user: nil, order: nil, at: Self.now - 5 * Self.day, token: device,
            submittedBy: "u-brother")
        w.credit("c-3022", tx: "1000000000003022", order: nil, user: "u-brother", at: Self.now - 5 * Self.day + 60_000)
        try w.commit(runRules: true)
        let sisters = try LookAlikeLookupTests.judged(w, "1000000000003021", rules: ["IAP-012"])
        #expect(sisters.verdict.code == .misCredit, "\(sisters.verdict.headline)")
        #expect(sisters.verdict.paidBy == "u-sister" && sisters.verdict.creditedTo == ["u-brother"])
        #expect(sisters.flagged)
        let his = try LookAlikeLookupTests.judged(w, "1000000000003022", rules: ["IAP-012"])
        #expect(his.verdict.code == .paidAndCredited, "\(his.verdict.headline)")
        #expect(!his.flagged)
    }
}
