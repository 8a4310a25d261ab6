import Foundation
import Testing

@testable import IAPGuard

/// Support merged an old account into a new one and the backend called Apple's Set App Account Token with the
/// new account's token: Apple's later copies of the subscription's transactions carry the new token. A credit
/// is owned when a verified copy received at or before it carried a token the credited account owned.
@Suite struct AccountMergeLookupTests {
    static let day = LookupTestWorld.day
    static let now = LookupTestWorld.now
    static let oldToken = "EEEEEEEE-0000-4000-8000-000000000001"
    static let newToken = "EEEEEEEE-0000-4000-8000-000000000002"
    static let first = "1000000000001301"
    static let renewal = "1000000000001302"

    /// u-old subscribed 40 days ago and was credited the first month; support merged it into u-new, whose token
    /// Apple then gave the subscription; the renewal 10 days ago was credited to u-new; a history pull 5 days
    /// ago returned the first transaction with the new token. Beside it, a purchase whose every copy carried
    /// u-x's token, credited to u-y.
    static func world() throws -> LookupTestWorld {
        var w = try LookupTestWorld()
        w.account("u-old", token: oldToken)
        w.account("u-new", token: newToken)
        let t0 = now - 40 * day
        let t1 = now - 10 * day
        w.purchase(
            first, user: "u-old", order: "o-old", at: t0, product: LookupTestWorld.monthly, price: 9990,
            token: oldToken, expires: t1)
        w.credit(
            "c-old", tx: first, order: "o-old", user: "u-old", at: t0 + 60_000, product: LookupTestWorld.monthly,
            units: 30)
        w.purchase(
            renewal, user: nil, order: nil, at: t1, product: LookupTestWorld.monthly, original: first, price: 9990,
            token: newToken, reason: "RENEWAL", expires: t1 + 30 * day)
        w.credit(
            "c-new", tx: renewal, order: nil, user: "u-new", at: t1 + 60_000, product: LookupTestWorld.monthly,
            units: 30)
        w.copy(of: first, receivedAt: now - 5 * day) { $0.appAccountToken = newToken }
        // The control: u-y credited for a purchase whose copies all carried u-x's token.
        w.account("u-x", token: "EEEEEEEE-0000-4000-8000-000000000003")
        w.account("u-y", token: "EEEEEEEE-0000-4000-8000-000000000004")
        w.purchase(
            "1000000000001311", user: nil, order: nil, at: now - 20 * day,
            token: "EEEEEEEE-0000-4000-8000-000000000003", submittedBy: "u-y")
        w.credit("c-y", tx: "1000000000001311", order: nil, user: "u-y", at: now - 20 * day + 60_000)
        w.copy(of: "1000000000001311", receivedAt: now - 5 * day) { _ in }
        try w.commit(runRules: true)
        return w
    }

    @Test func creditsOwnedByTheTokenAtCreditTimeAreNotMisCreditsAfterTheTokenChanged() throws {
        let world = try Self.world()
        // The first transaction's id also finds the renewal (its original id): both are judged together.
        let result = try world.lookup(Self.first)
        let first = try #require(result.verdicts.first { $0.transactionID == Self.first })
        let renewal = try #require(result.verdicts.first { $0.transactionID == Self.renewal })
        #expect(first.code == .paidAndCredited, "\(first.headline)")
        #expect(first.paidBy == "u-old" && first.creditedTo == ["u-old"])
        #expect(first.action == nil)
        #expect(first.details.contains { $0.contains("c-old") && $0.contains("u-old") && $0.contains("u-new") })
        #expect(renewal.code == .paidAndCredited, "\(renewal.headline)")
        #expect(renewal.creditedTo == ["u-new"])
        #expect(renewal.action == nil)
        // Never "credit u-new" on one and "credit u-old" on the other.
        #expect(!result.verdicts.contains { $0.code == .misCredit })
        // The renewal's own lookup says the same.
        let alone = try #require(try world.lookup(Self.renewal).verdicts.first { $0.transactionID == Self.renewal })
        #expect(alone.code == renewal.code && alone.paidBy == renewal.paidBy && alone.action == renewal.action)
    }

    @Test func aCreditWhoseCopiesAllCarriedAnotherAccountsTokenIsStillAMisCredit() throws {
        let world = try Self.world()
        let result = try world.lookup("1000000000001311", kind: .transaction)
        let v = try #require(result.verdicts.first)
        #expect(v.code == .misCredit)
        #expect(v.paidBy == "u-x" && v.creditedTo == ["u-y"])
    }
}
