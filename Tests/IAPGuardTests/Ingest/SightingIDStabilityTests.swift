import Foundation
import Testing

@testable import IAPGuard

/// The sighting id hashes the transaction's description; the fast description must be exactly the
/// reflection one, or re-ingesting into an existing store would duplicate every sighting.
@Suite struct SightingIDStabilityTests {
    /// The reflection description without `appTransactionID` and the purchase terms after it (the last
    /// properties, left out of the id).
    private func reflected(_ t: AppleTransaction) -> String {
        var plain = t
        plain.appTransactionID = nil
        plain.offerType = nil
        plain.offerIdentifier = nil
        plain.offerDiscountType = nil
        plain.offerPeriod = nil
        plain.billingPlanType = nil
        plain.commitmentInfo = nil
        plain.advancedCommerceInfo = nil
        plain.unknownFields = nil
        let text = String(describing: plain)
        let suffix =
            ", appTransactionID: nil, offerType: nil, offerIdentifier: nil, offerDiscountType: nil, offerPeriod: nil,"
            + " billingPlanType: nil, commitmentInfo: nil, advancedCommerceInfo: nil, unknownFields: nil)"
        return text.hasSuffix(suffix) ? String(text.dropLast(suffix.count)) + ")" : text
    }

    @Test func stableDescriptionIsExactlyTheReflectionDescription() {
        var bare = AppleTransaction(transactionID: "2000000000000001")
        #expect(bare.stableDescription == reflected(bare))
        bare.originalTransactionID = "quote \" backslash \\ tab \t newline \n é ✓ \u{1F}"
        bare.webOrderLineItemID = ""
        bare.inAppOwnershipType = "it's"
        #expect(bare.stableDescription == reflected(bare))
        bare.bundleID = "com.example.coins"
        bare.productID = "com.example.coins.pack100"
        bare.type = "Consumable"
        bare.quantity = -1
        bare.purchaseDate = Int64.max
        bare.originalPurchaseDate = Int64.min
        bare.expiresDate = 0
        bare.environment = "Production"
        bare.storefront = "USA"
        bare.currency = "USD"
        bare.price = 990
        bare.appAccountToken = "5d5c1d3e-0000-4000-8000-000000000000"
        bare.inAppOwnershipType = "PURCHASED"
        bare.transactionReason = "PURCHASE"
        bare.revocationDate = 1_780_000_000_000
        bare.revocationReason = 1
        bare.revocationType = "REFUND_FULL"
        bare.revocationPercentage = 50_000
        bare.signedDate = 1_717_200_000_000
        bare.appTransactionID = "704289572311812345"
        #expect(bare.stableDescription == reflected(bare))
        var some = bare
        some.quantity = nil
        some.storefront = nil
        some.signedDate = nil
        #expect(some.stableDescription == reflected(some))
    }

    /// Ids already stored were hashed from the parts joined as text; the byte-buffer hash must equal it.
    @Test func theSightingIDIsTheHashOfItsPartsJoinedByUnitSeparators() {
        var t = AppleTransaction(transactionID: "2000000000000004")
        t.originalTransactionID = "quote \" é ✓ \u{1F}"
        t.quantity = -12
        t.purchaseDate = Int64.min
        t.price = 0
        t.signedDate = Int64.max
        var sighting = AppleSighting(
            transaction: t, sourceKind: .receipt, sourceName: "s", sourceRef: "f:1", payloadHash: "h",
            verification: .unverified)
        sighting.submittedByUserID = "u-1"
        let joined = [
            sighting.sourceKind.rawValue, "h", t.transactionID, "u-1", "", t.stableDescription,
        ].joined(separator: "\u{1F}")
        #expect(sighting.computedSightingID == Hashing.sha256Hex(joined))
        let plain = AppleSighting(
            transaction: AppleTransaction(transactionID: "1"), sourceKind: .jws, sourceName: "s", sourceRef: "r",
            payloadHash: "p", verification: .unverified)
        #expect(plain.computedSightingID == "1ed68672b5687786c0a1056c0861d5d83905f39e9477f764f5a6c9bb3a4aa63d")
    }

    @Test func aSightingIDComputedOnAParseThreadIsTheIDTheWriterWouldCompute() {
        var t = AppleTransaction(transactionID: "2000000000000003")
        t.productID = "com.example.coins.pack100"
        let sighting = AppleSighting(
            transaction: t, sourceKind: .jws, sourceName: "s", sourceRef: "f:1", payloadHash: "h",
            verification: .unverified)
        var cached = sighting
        cached.cacheSightingID()
        #expect(cached.cachedID.value == sighting.computedSightingID)
        #expect(cached.sightingID == sighting.sightingID)
        #expect(cached == sighting)
    }

    @Test func theAppTransactionIDLeavesTheSightingIDUnchanged() {
        var t = AppleTransaction(transactionID: "2000000000000002")
        t.bundleID = "com.example.coins"
        let before = AppleSighting(
            transaction: t, sourceKind: .jws, sourceName: "s", sourceRef: "f:1", payloadHash: "h",
            verification: .unverified)
        t.appTransactionID = "704289572311812345"
        let after = AppleSighting(
            transaction: t, sourceKind: .jws, sourceName: "s", sourceRef: "f:1", payloadHash: "h",
            verification: .unverified)
        #expect(before.sightingID == after.sightingID)
    }

    @Test func thePurchaseTermsLeaveTheSightingIDUnchanged() {
        var t = AppleTransaction(transactionID: "2000000000000003")
        t.bundleID = "com.example.coins"
        let before = AppleSighting(
            transaction: t, sourceKind: .jws, sourceName: "s", sourceRef: "f:1", payloadHash: "h",
            verification: .unverified)
        t.offerType = 3
        t.offerIdentifier = "SPRING"
        t.offerDiscountType = "FREE_TRIAL"
        t.offerPeriod = "P1M"
        t.billingPlanType = "MONTHLY"
        t.commitmentInfo = "{}"
        t.advancedCommerceInfo = "{}"
        t.unknownFields = "{\"x\":1}"
        let after = AppleSighting(
            transaction: t, sourceKind: .jws, sourceName: "s", sourceRef: "f:1", payloadHash: "h",
            verification: .unverified)
        #expect(before.sightingID == after.sightingID)
    }
}
