import Foundation
import Testing

@testable import IAPGuard

/// "I was charged twice": two real Apple charges are one customer's double purchase only when the same payer
/// paid both (the same Apple Account when both transactions name one, else the same ordering account), and a
/// transaction reads the same whichever of its ids is looked up.
@Suite struct ChargedTwiceLookupTests {
    static let day = LookupTestWorld.day
    static let now = LookupTestWorld.now
    static let sharedToken = "EEEEEEEE-0000-4000-8000-000000000005"
    static let ownToken = "FFFFFFFF-0000-4000-8000-000000000006"

    /// Four pairs of purchases of one product minutes apart:
    /// - u-first paid on its own order from no known Apple Account; the app re-delivered it in u-session's
    ///   session, which was credited (a mis-credit); u-session bought the same product itself 50 minutes later;
    /// - u-farm1 and u-farm2 ordered with one token, each paying from their own Apple Account;
    /// - u-double paid twice from one Apple Account;
    /// - one Apple Account paid for an order of u-left and, 10 minutes later, one of u-right.
    static func world() throws -> LookupTestWorld {
        var w = try LookupTestWorld()
        let at = now - 5 * day
        w.account("u-session", token: ownToken)
        w.purchase("1000000000002001", user: "u-first", order: "o-first", at: at, submittedBy: "u-session")
        w.credit("c-first", tx: "1000000000002001", order: "o-first", user: "u-session", at: at + 60_000)
        w.purchase(
            "1000000000002002", user: "u-session", order: "o-session", at: at + 50 * 60_000, token: ownToken,
            appleAccount: "705000000000002002")
        w.credit("c-session", tx: "1000000000002002", order: "o-session", user: "u-session", at: at + 51 * 60_000)

        w.purchase(
            "1000000000002011", user: "u-farm1", order: "o-farm1", at: at, token: sharedToken,
            appleAccount: "705000000000002011")
        w.credit("c-farm1", tx: "1000000000002011", order: "o-farm1", user: "u-farm1", at: at + 60_000)
        w.purchase(
            "1000000000002012", user: "u-farm2", order: "o-farm2", at: at + 40 * 60_000, token: sharedToken,
            appleAccount: "705000000000002012")
        w.credit("c-farm2", tx: "1000000000002012", order: "o-farm2", user: "u-farm2", at: at + 41 * 60_000)

        for (tx, order, minutes) in [("1000000000002021", "o-double1", Int64(0)), ("1000000000002022", "o-double2", 7)]
        {
            w.purchase(
                tx, user: "u-double", order: order, at: at + minutes * 60_000, appleAccount: "705000000000002021")
            w.credit("c-\(order)", tx: tx, order: order, user: "u-double", at: at + (minutes + 1) * 60_000)
        }

        for (tx, user, minutes) in [("1000000000002031", "u-left", Int64(0)), ("1000000000002032", "u-right", 10)] {
            w.purchase(
                tx, user: user, order: "o-\(user)", at: at + minutes * 60_000, appleAccount: "705000000000002031")
            w.credit("c-\(user)", tx: tx, order: "o-\(user)", user: user, at: at + (minutes + 1) * 60_000)
        }
        // Two charges from one Apple Account minutes apart, the second refunded by Apple (a child's tap the
        // parent reported): the customer has nothing left to claim.
        for (tx, minutes, refunded) in [("1000000000002041", Int64(0), false), ("1000000000002042", 4, true)] {
            w.purchase(
                tx, user: "u-refunded", order: "o-\(tx)", at: at + minutes * 60_000,
                revokedAt: refunded ? at + 2 * day : nil, appleAccount: "705000000000002041")
            w.credit("c-\(tx)", tx: tx, order: "o-\(tx)", user: "u-refunded", at: at + (minutes + 1) * 60_000)
        }
        // A customer who bought three packs a minute apart from one Apple Account: a series they chose, not a
        // double charge.
        for (tx, minutes) in [("1000000000002051", Int64(0)), ("1000000000002052", 1), ("1000000000002053", 2)] {
            w.purchase(
                tx, user: "u-series", order: "o-\(tx)", at: at + minutes * 60_000, appleAccount: "705000000000002051")
            w.credit("c-\(tx)", tx: tx, order: "o-\(tx)", user: "u-series", at: at + (minutes + 1) * 60_000)
        }
        try w.commit(runRules: true)
        return w
    }

    static func chargedTwice(_ result: LookupResult) -> [ClaimVerdict] {
        result.verdicts.filter { $0.code == .chargedTwice }
    }

    /// Two payers' purchases, and one payer's pair of which Apple already refunded one, are never charged twice.
    @Test func purchasesOfTwoPayersAreNeverChargedTwiceWhicheverIdIsLookedUp() throws {
        let world = try Self.world()
        for (id, kind) in [
            ("1000000000002001", IDKind.transaction), ("1000000000002002", .transaction),
            (Self.ownToken, .token), ("u-session", .user), ("1000000000002011", .transaction),
            ("1000000000002012", .transaction), (Self.sharedToken, .token), ("1000000000002041", .transaction),
            ("1000000000002042", .transaction), ("u-refunded", .user),
        ] {
            let result = try world.lookup(id, kind: kind)
            #expect(Self.chargedTwice(result).isEmpty, "\(id): \(Self.chargedTwice(result).map(\.headline))")
        }
    }

    @Test func aMisCreditedPurchaseIsMisCreditInEveryLookupThatShowsIt() throws {
        let world = try Self.world()
        for (id, kind) in [
            ("1000000000002001", IDKind.transaction), ("o-first", .order), ("u-session", .user), ("u-first", .user),
        ] {
            let result = try world.lookup(id, kind: kind)
            let v = try #require(result.verdicts.first { $0.transactionID == "1000000000002001" }, "\(id)")
            #expect(v.code == .misCredit, "\(id): \(v.headline)")
            #expect(v.paidBy == "u-first" && v.creditedTo == ["u-session"], "\(id)")
        }
        // The token lookup names only the transactions carrying the token, not the re-delivered one.
        let byToken = try world.lookup(Self.ownToken, kind: .token)
        #expect(byToken.verdicts.map(\.transactionID) == ["1000000000002002"])
    }

    @Test func twoChargesFromOneAppleAccountAreChargedTwiceWithOneVerdictFromEitherId() throws {
        let world = try Self.world()
        let first = try world.lookup("1000000000002021", kind: .transaction)
        let second = try world.lookup("1000000000002022", kind: .transaction)
        let a = try #require(Self.chargedTwice(first).first)
        #expect(Self.chargedTwice(first) == Self.chargedTwice(second))
        #expect(a.transactionID == "1000000000002021" && a.relatedTransactionIDs == ["1000000000002022"])
        #expect(a.paidBy == "u-double")
        #expect(a.headline.contains("u-double bought com.example.coins.pack100 twice, 7 min apart"))
        // The other transaction of the pair is judged too, the same as when it is looked up itself.
        let own = try #require(second.verdicts.first { $0.transactionID == "1000000000002022" })
        #expect(first.verdicts.first { $0.transactionID == "1000000000002022" } == own)
    }

    @Test func oneAppleAccountPayingForTwoAccountsOrdersIsChargedTwiceNamingBoth() throws {
        let world = try Self.world()
        for id in ["1000000000002031", "1000000000002032"] {
            let twice = Self.chargedTwice(try world.lookup(id, kind: .transaction))
            #expect(twice.count == 1, "\(id)")
            let v = try #require(twice.first)
            #expect(v.transactionID == "1000000000002031" && v.relatedTransactionIDs == ["1000000000002032"])
            #expect(v.headline.contains("Apple Account 705000000000002031"), "\(v.headline)")
            #expect(v.headline.contains("u-left") && v.headline.contains("u-right"), "\(v.headline)")
        }
    }

    /// Three purchases of one product within the hour by one payer are a series the customer chose: no pair of
    /// them is charged twice, whichever id is looked up; a pair with no third purchase still is (above).
    @Test func threePurchasesOfOneProductWithinTheHourAreASeriesNotChargedTwice() throws {
        let world = try Self.world()
        for (id, kind) in [
            ("1000000000002051", IDKind.transaction), ("1000000000002052", .transaction),
            ("1000000000002053", .transaction), ("u-series", .user),
        ] {
            let result = try world.lookup(id, kind: kind)
            #expect(Self.chargedTwice(result).isEmpty, "\(id): \(Self.chargedTwice(result).map(\.headline))")
            #expect(result.verdicts.allSatisfy { $0.code == .paidAndCredited }, "\(id): \(result.verdicts.map(\.code))")
        }
    }
}
