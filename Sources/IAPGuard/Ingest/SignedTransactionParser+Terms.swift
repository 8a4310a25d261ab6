extension SignedTransactionParser {
    /// Every member of Apple's `JWSTransactionDecodedPayload` (App Store Server API 1.21). Members outside
    /// this list are fields Apple added later: kept as ``AppleTransaction/unknownFields``, never refused.
    static let documentedKeys = JSONKeySet([
        "originalTransactionId", "transactionId", "webOrderLineItemId", "bundleId", "productId",
        "subscriptionGroupIdentifier", "purchaseDate", "originalPurchaseDate", "expiresDate", "quantity", "type",
        "appAccountToken", "inAppOwnershipType", "signedDate", "revocationReason", "revocationDate", "isUpgraded",
        "offerType", "offerIdentifier", "environment", "storefront", "storefrontId", "transactionReason", "currency",
        "price", "offerDiscountType", "appTransactionId", "offerPeriod", "revocationType", "revocationPercentage",
        "advancedCommerceInfo", "billingPlanType", "commitmentInfo",
    ])

    /// Reads the terms of the purchase — the offer, the billing plan and commitment, Advanced Commerce items —
    /// and the members Apple's schema does not name. Known fields of the wrong JSON type are `schema` errors
    /// (as for every other field); unknown members and unknown enum values are kept as they came.
    static func readTerms(_ p: JSONObject, into t: inout AppleTransaction) throws {
        t.offerType = try p.schemaInteger("offerType")
        t.offerIdentifier = try p.schemaString("offerIdentifier")
        t.offerDiscountType = try p.schemaString("offerDiscountType")
        t.offerPeriod = try p.schemaString("offerPeriod")
        t.billingPlanType = try p.schemaString("billingPlanType")
        if let commitment = try p.schemaObject("commitmentInfo") {
            for key in ["billingPeriodNumber", "commitmentExpiresDate", "commitmentPrice", "totalBillingPeriods"] {
                _ = try commitment.schemaInteger(key)
            }
            t.commitmentInfo = p.jsonText("commitmentInfo")
        }
        if let commerce = try p.schemaObject("advancedCommerceInfo") {
            try checkAdvancedCommerce(commerce)
            t.advancedCommerceInfo = p.jsonText("advancedCommerceInfo")
        }
        t.unknownFields = p.unknownMembers(known: documentedKeys)
    }

    /// Holds `advancedCommerceInfo` (`AdvancedCommerceTransactionInfo`) to the types Apple documents for the
    /// members iapguard reads: amounts and dates are integers, codes and SKUs strings, `items` and each
    /// item's `refunds` arrays of objects.
    static func checkAdvancedCommerce(_ info: JSONObject) throws {
        for key in ["estimatedTax", "taxExclusivePrice"] { _ = try info.schemaInteger(key) }
        for key in ["period", "requestReferenceId", "taxCode", "taxRate"] { _ = try info.schemaString(key) }
        for item in try info.schemaObjects("items") {
            for key in ["SKU", "description", "displayName"] { _ = try item.schemaString(key) }
            for key in ["price", "revocationDate"] { _ = try item.schemaInteger(key) }
            for refund in try item.schemaObjects("refunds") {
                for key in ["refundAmount", "refundDate"] { _ = try refund.schemaInteger(key) }
                for key in ["refundReason", "refundType"] { _ = try refund.schemaString(key) }
            }
        }
    }
}
