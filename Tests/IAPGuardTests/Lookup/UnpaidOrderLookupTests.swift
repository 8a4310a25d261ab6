import Foundation
import Testing

@testable import IAPGuard

/// The lookup's "credited without payment" headline follows IAP-022's `unpaid_statuses` as the run binds it.
@Suite("Lookup of a credited order that was never paid")
struct UnpaidOrderLookupTests {
    /// Two orders credited with no Apple transaction: one `failed`, one in a backend's own `on_hold` status.
    static func world() throws -> LookupTestWorld {
        var w = try LookupTestWorld()
        let at = LookupTestWorld.now - 3 * LookupTestWorld.day
        w.account("u-failed")
        w.account("u-hold")
        w.order("o-failed", user: "u-failed", tx: nil, product: LookupTestWorld.pack100, at: at, status: " Failed ")
        w.credit("c-failed", tx: nil, order: "o-failed", user: "u-failed", at: at + 60_000)
        w.order("o-hold", user: "u-hold", tx: nil, product: LookupTestWorld.pack100, at: at, status: "on_hold")
        w.credit("c-hold", tx: nil, order: "o-hold", user: "u-hold", at: at + 60_000)
        try w.commit(runRules: false)
        return w
    }

    func verdict(_ orderID: String, in w: LookupTestWorld, statuses: UnpaidOrderStatuses? = nil) throws
        -> ClaimVerdict
    {
        var service = try w.service()
        if let statuses { service.unpaidOrderStatuses = statuses }
        let result = try service.lookup(LookupQuery(id: orderID, kind: .order))
        return try #require(result.verdicts.first)
    }

    @Test func aCreditedFailedOrderIsCreditedWithoutPayment() throws {
        let w = try Self.world()
        let v = try verdict("o-failed", in: w)
        #expect(v.headline.hasPrefix("Credited without payment"), "\(v.headline)")
        #expect(v.action?.contains("IAP-022") == true)
        #expect(v.problem)
    }

    @Test func aStatusOutsideTheDefaultListIsOnlyUnconfirmed() throws {
        let w = try Self.world()
        let v = try verdict("o-hold", in: w)
        #expect(v.headline.hasPrefix("Unconfirmed"), "\(v.headline)")
    }

    @Test func theAnalystsUnpaidStatusesDecideTheHeadline() throws {
        let w = try Self.world()
        let overrides: [String: [String: SQLValue]] = ["IAP-022": ["unpaid_statuses": .text("on_hold, declined")]]
        let (rules, _) = RuleSet.load(from: Fixtures.repoRoot.appendingPathComponent("rules"))
        let parameters = LookupRuleParameters(rules: rules, overrides: overrides)
        #expect(parameters.unpaidStatuses?.statuses == ["on_hold", "declined"])
        // As IAP-022's SQL: any case, spaces anywhere in the list ignored, whole statuses only.
        let spaced = UnpaidOrderStatuses(parameter: "Failed , On_ Hold")
        #expect(spaced.statuses == ["failed", "on_hold"])
        #expect(spaced.contains(orderStatus: " ON_HOLD "))
        #expect(!spaced.contains(orderStatus: "on%"))
        var service = try w.service()
        parameters.apply(to: &service)
        let hold = try #require(try service.lookup(LookupQuery(id: "o-hold", kind: .order)).verdicts.first)
        #expect(hold.headline.hasPrefix("Credited without payment"), "\(hold.headline)")
        let failed = try #require(try service.lookup(LookupQuery(id: "o-failed", kind: .order)).verdicts.first)
        #expect(failed.headline.hasPrefix("Unconfirmed"), "\(failed.headline)")
    }

    @Test func theBuiltInListIsTheRuleFilesDefault() throws {
        let (rules, _) = RuleSet.load(from: Fixtures.repoRoot.appendingPathComponent("rules"))
        let parameters = LookupRuleParameters(rules: rules, overrides: [:])
        #expect(parameters.unpaidStatuses == UnpaidOrderStatuses.ruleDefault)
        #expect(parameters.graceHours != nil && parameters.renewalCreditShare != nil)
    }
}
