import Foundation
import Testing

@testable import IAPGuard

/// The consumption draft follows Apple's v2 `ConsumptionRequest` rules for every product type.
@Suite struct ConsumptionRequestV2Tests {
    typealias W = LookupTestWorld

    /// A world with one consumption request per case below, judged at ``LookupTestWorld/now``.
    static func world() throws -> LookupTestWorld {
        var w = try LookupTestWorld()
        let n = W.now
        // an auto-renewable subscription the customer asks Apple to refund
        w.purchase(
            "1000000000000101", user: "u-sub", order: "o-sub", at: n - 5 * W.day, product: W.monthly,
            token: "EEEEEEEE-0000-4000-8000-000000000001")
        w.credit(
            "c-sub", tx: "1000000000000101", order: "o-sub", user: "u-sub", at: n - 5 * W.day + 60_000,
            product: W.monthly, units: 1)
        w.notification("n-sub", type: "CONSUMPTION_REQUEST", tx: "1000000000000101", at: n - W.day)
        // a consumable the backend never credited
        w.purchase("1000000000000102", user: "u-lost", order: "o-lost", at: n - 5 * W.day)
        w.notification("n-lost", type: "CONSUMPTION_REQUEST", tx: "1000000000000102", at: n - W.day)
        // a consumable of which the backend saw 25 of 100 units spent, from a customer without refunds
        w.purchase("1000000000000103", user: "u-part", order: "o-part", at: n - 5 * W.day)
        w.credit(
            "c-part", tx: "1000000000000103", order: "o-part", user: "u-part", at: n - 5 * W.day + 60_000,
            consumed: (25, n - 4 * W.day))
        w.notification("n-part", type: "CONSUMPTION_REQUEST", tx: "1000000000000103", at: n - W.day)
        // a non-consumable unlock
        w.purchase("1000000000000104", user: "u-unlock", order: "o-unlock", at: n - 5 * W.day, product: W.noAds)
        w.credit(
            "c-unlock", tx: "1000000000000104", order: "o-unlock", user: "u-unlock", at: n - 5 * W.day + 60_000,
            product: W.noAds, units: 1)
        w.notification("n-unlock", type: "CONSUMPTION_REQUEST", tx: "1000000000000104", at: n - W.day)
        try w.commit(runRules: false)
        return w
    }

    static func draft(_ w: LookupTestWorld, _ tx: String) throws -> ConsumptionDraft {
        let result = try w.lookup(tx, consented: true)
        return try #require(result.consumptionDrafts.first { $0.transactionID == tx })
    }

    @Test func anAutoRenewableSubscriptionIsDraftedWithoutAConsumptionPercentage() throws {
        let d = try Self.draft(Self.world(), "1000000000000101")
        #expect(d.state == .draft)
        let body = try #require(d.appleRequest)
        #expect(body.consumptionPercentage == nil)
        #expect(body.deliveryStatus == "DELIVERED")
        #expect(body.violations(productType: "Auto-Renewable Subscription").isEmpty)
        #expect(d.appleRequestV1 != nil, "the V1 endpoint takes auto-renewable subscriptions")
        #expect(d.basis.contains { $0.contains("consumptionPercentage: omitted") })
    }

    @Test func anUndeliveredPurchaseReportsZeroConsumption() throws {
        let d = try Self.draft(Self.world(), "1000000000000102")
        let body = try #require(d.appleRequest)
        #expect(body.deliveryStatus == "UNDELIVERED_OTHER")
        #expect(body.consumptionPercentage == 0)
        #expect(body.refundPreference == "GRANT_FULL")
        #expect(body.violations(productType: "Consumable").isEmpty)
    }

    @Test func aPartlySpentConsumableAsksForAProratedRefundWithItsPercentage() throws {
        let d = try Self.draft(Self.world(), "1000000000000103")
        let body = try #require(d.appleRequest)
        #expect(body.refundPreference == "GRANT_PRORATED")
        #expect(body.consumptionPercentage == 25_000)
        #expect(body.violations(productType: "Consumable").isEmpty)
    }

    @Test func aNonConsumableIsDraftedWithoutTheV1Body() throws {
        let d = try Self.draft(Self.world(), "1000000000000104")
        #expect(d.state == .draft)
        #expect(d.appleRequest?.violations(productType: "Non-Consumable").isEmpty == true)
        #expect(d.appleRequestV1 == nil)
    }

    @Test func noDraftWithoutTheCustomersConsent() throws {
        let result = try Self.world().lookup("1000000000000103", consented: false)
        let d = try #require(result.consumptionDrafts.first)
        #expect(d.state == .notDrafted && d.appleRequest == nil && d.appleRequestV1 == nil)
    }

    @Test func everyDraftOfTheStandardWorldIsAValidV2Request() throws {
        let w = try LookupTestWorld.standard()
        for tx in ["1000000000000060", "1000000000000070"] {
            let d = try Self.draft(w, tx)
            #expect(d.state == .draft, "\(tx)")
            #expect(d.appleRequest?.violations(productType: "Consumable") == [], "\(tx): both are consumables")
        }
    }

    @Test func violationsNameEachOfApplesV2Constraints() {
        typealias R = ConsumptionDraft.AppleRequest
        func body(_ pct: Int?, _ delivery: String = "DELIVERED", _ pref: String? = nil, consented: Bool = true) -> R {
            R(
                customerConsented: consented, consumptionPercentage: pct, deliveryStatus: delivery,
                refundPreference: pref, sampleContentProvided: false)
        }
        #expect(body(50_000).violations(productType: "Consumable").isEmpty)
        #expect(body(nil).violations(productType: "Auto-Renewable Subscription").isEmpty)
        #expect(
            body(50_000, consented: false).violations(productType: "Consumable") == ["customerConsented must be true"])
        #expect(
            body(10_000).violations(productType: "Auto-Renewable Subscription")
                == ["consumptionPercentage must be omitted for an auto-renewable subscription"])
        #expect(
            body(0, "DELIVERED", "GRANT_PRORATED").violations(productType: "Consumable")
                == ["GRANT_PRORATED needs a consumptionPercentage above 0"])
        #expect(
            body(nil, "DELIVERED", "GRANT_PRORATED").violations(productType: "Non-Consumable")
                == ["GRANT_PRORATED needs a consumptionPercentage above 0"])
        #expect(
            body(30_000, "UNDELIVERED_OTHER").violations(productType: "Consumable")
                == ["consumptionPercentage must be 0 when deliveryStatus is not DELIVERED"])
        #expect(
            body(100_001).violations(productType: "Consumable") == [
                "consumptionPercentage 100001 is outside 0...100000"
            ])
        #expect(body(0, "DELIVERED_AND_WORKING_PROPERLY").violations(productType: "Consumable").count == 1)
        #expect(body(0, "DELIVERED", "MAYBE").violations(productType: "Consumable").count == 1)
    }
}
