import Foundation
import Testing

@testable import IAPGuard

/// Ids support gets from the backend rather than from Apple: a credit id, an account the accounts source
/// (`users`) knows but that never bought anything, and such an account's app account token. Each is found.
@Suite struct BackendIdLookupTests {
    static let day = LookupTestWorld.day
    static let now = LookupTestWorld.now
    static let newToken = "DEDEDEDE-0000-4000-8000-000000000009"

    /// u-payer's purchase credited to u-other (c-mis); a credit that names only its order (c-by-order); and
    /// u-new, in the accounts source only.
    static func world() throws -> LookupTestWorld {
        var w = try LookupTestWorld()
        w.purchase("1000000000004001", user: "u-payer", order: "o-payer", at: now - 5 * day)
        w.credit("c-mis", tx: "1000000000004001", order: "o-payer", user: "u-other", at: now - 5 * day + 60_000)
        w.purchase("1000000000004002", user: "u-plain", order: "o-plain", at: now - 4 * day)
        w.credit("c-by-order", tx: nil, order: "o-plain", user: "u-plain", at: now - 4 * day + 60_000)
        w.account("u-new", token: newToken, country: "EGY")
        try w.commit(runRules: true)
        return w
    }

    @Test func aCreditIdResolvesToItsTransactionOrderAndAccount() throws {
        let world = try Self.world()
        let result = try world.lookup("c-mis")
        #expect(result.found)
        #expect(result.query.matches.map(\.kind) == [.order])
        let matched = try #require(result.query.matches.first?.matched)
        #expect(matched.contains("credit c-mis") && matched.contains("u-other"), "\(matched)")
        let byTransaction = try world.lookup("1000000000004001", kind: .transaction)
        let v = try #require(result.verdicts.first { $0.transactionID == "1000000000004001" })
        #expect(v.code == .misCredit)
        #expect(v == byTransaction.verdicts.first { $0.transactionID == "1000000000004001" })
        // A credit that names only its order reaches the order's transaction.
        let byOrder = try world.lookup("c-by-order", kind: .order)
        #expect(byOrder.verdicts.map(\.transactionID) == ["1000000000004002"])
        #expect(byOrder.verdicts.first?.code == .paidAndCredited)
    }

    @Test func anAccountKnownOnlyFromTheAccountsSourceIsAKnownAccountWithNoPurchases() throws {
        let world = try Self.world()
        let result = try world.lookup("u-new")
        #expect(result.found)
        #expect(result.query.matches.map(\.kind) == [.user])
        #expect(!result.verdicts.contains { $0.code == .notFound })
        let profile = try #require(result.users.first)
        #expect(profile.userID == "u-new" && profile.purchaseCount == 0 && profile.orders == 0)
        #expect(profile.account?.country == "EGY")
        #expect(profile.account?.appAccountToken == Self.newToken.lowercased())
        #expect(
            result.answer.contains { $0.contains("known account") && $0.contains("no purchases") }, "\(result.answer)")
        #expect(LookupTextRenderer().render(result).contains("EGY"))
    }

    @Test func aTokenKnownOnlyFromTheAccountsSourceFindsItsAccount() throws {
        let world = try Self.world()
        let result = try world.lookup(Self.newToken)
        #expect(result.found)
        #expect(result.query.matches.map(\.kind) == [.token])
        #expect(result.users.map(\.userID) == ["u-new"])
        #expect(result.query.matches.first?.matched.contains("u-new") == true)
    }

    @Test func aTransactionIdWithLeadingZerosFindsTheTransactionAndSaysHowItWasRead() throws {
        let world = try Self.world()
        let plain = try world.lookup("1000000000004001")
        let padded = try world.lookup("0001000000000004001")
        #expect(padded.found)
        #expect(padded.query.matches.map(\.kind) == plain.query.matches.map(\.kind))
        #expect(padded.verdicts == plain.verdicts)
        #expect(padded.notes.contains { $0.contains("read as transaction 1000000000004001") }, "\(padded.notes)")
        // Unpadded ids get no such note, and an order id keeps its zeros.
        #expect(!plain.notes.contains { $0.contains("leading zeros") })
        #expect(!(try world.lookup("0o-payer")).found)
    }
}
