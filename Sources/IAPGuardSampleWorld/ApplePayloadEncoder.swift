import IAPGuard

/// Turns the generator's transactions into Apple's JSON shapes: the JWS transaction payload
/// (`JWSTransactionDecodedPayload`), renewal info, notification V2 payloads and legacy `in_app` entries
/// (numbers as strings, date text twins).
enum ApplePayloadEncoder {
    /// Extra knobs for legacy entries (forged receipts).
    struct LegacyQuirks: Sendable {
        /// Shifts the `purchase_date` text away from `purchase_date_ms` (a forged receipt's tell).
        var purchaseDateTextOffset: Int64 = 0
    }

    /// The decoded JWS transaction payload.
    static func transactionPayload(_ t: AppleTransaction, groupID: String?) -> WorldJSON {
        let storefrontID = t.storefront.map { WorldCatalog.storefront($0).storefrontID }
        // An upgraded subscription: Apple's `isUpgraded` beside the date it ended, and no refund reason or type
        // (the `UPGRADE` label is iapguard's reading of exactly that).
        let upgraded = t.revocationType == AppleTransaction.upgradeRevocationType
        return .obj([
            ("transactionId", .str(t.transactionID)),
            ("originalTransactionId", .str(t.originalTransactionID)),
            ("webOrderLineItemId", .str(t.webOrderLineItemID)),
            ("bundleId", .str(t.bundleID)),
            ("productId", .str(t.productID)),
            ("subscriptionGroupIdentifier", .str(groupID)),
            ("purchaseDate", .num(t.purchaseDate)),
            ("originalPurchaseDate", .num(t.originalPurchaseDate)),
            ("expiresDate", .num(t.expiresDate)),
            ("quantity", .num(t.quantity)),
            ("type", .str(t.type)),
            ("appAccountToken", .str(t.appAccountToken)),
            ("inAppOwnershipType", .str(t.inAppOwnershipType)),
            ("signedDate", .num(t.signedDate)),
            ("revocationReason", .num(t.revocationReason)),
            ("revocationDate", .num(t.revocationDate)),
            ("revocationType", upgraded ? nil : .str(t.revocationType)),
            ("revocationPercentage", .num(t.revocationPercentage)),
            ("isUpgraded", upgraded ? .bool(true) : nil),
            ("environment", .str(t.environment)),
            ("transactionReason", .str(t.transactionReason)),
            ("storefront", .str(t.storefront)),
            ("storefrontId", .str(storefrontID)),
            ("price", .num(t.price)),
            ("currency", .str(t.currency)),
            ("appTransactionId", .str(t.appTransactionID)),
            ("offerType", .num(t.offerType)),
            ("offerIdentifier", .str(t.offerIdentifier)),
            ("offerDiscountType", .str(t.offerDiscountType)),
            ("offerPeriod", .str(t.offerPeriod)),
        ])
    }

    /// The decoded JWS renewal info for a subscription.
    static func renewalPayload(
        _ t: AppleTransaction, autoRenew: Bool, signedDate: Int64, gracePeriodExpires: Int64? = nil
    ) -> WorldJSON {
        .obj([
            ("originalTransactionId", .str(t.originalTransactionID)),
            ("autoRenewProductId", .str(t.productID)),
            ("productId", .str(t.productID)),
            ("autoRenewStatus", .int(autoRenew ? 1 : 0)),
            ("signedDate", .int(signedDate)),
            ("environment", .str(t.environment)),
            ("recentSubscriptionStartDate", .num(t.originalPurchaseDate)),
            ("renewalDate", .num(t.expiresDate)),
            ("renewalPrice", .num(t.price)),
            ("currency", .str(t.currency)),
            ("appAccountToken", .str(t.appAccountToken)),
            ("isInBillingRetryPeriod", gracePeriodExpires.map { _ in .bool(true) }),
            ("gracePeriodExpiresDate", .num(gracePeriodExpires)),
        ])
    }

    /// The decoded notification V2 payload.
    static func notificationPayload(
        type: String, subtype: String?, uuid: String, signedDate: Int64, app: WorldCatalog.App,
        environment: String, signedTransaction: String, signedRenewal: String?, consumptionReason: String?
    ) -> WorldJSON {
        .obj([
            ("notificationType", .string(type)),
            ("subtype", .str(subtype)),
            ("notificationUUID", .string(uuid)),
            (
                "data",
                .obj([
                    ("appAppleId", .int(app.appAppleID)),
                    ("bundleId", .string(app.bundleID)),
                    ("bundleVersion", .string("17")),
                    ("environment", .string(environment)),
                    ("signedTransactionInfo", .string(signedTransaction)),
                    ("signedRenewalInfo", .str(signedRenewal)),
                    ("status", signedRenewal == nil ? nil : .int(1)),
                    ("consumptionRequestReason", .str(consumptionReason)),
                ])
            ),
            ("version", .string("2.0")),
            ("signedDate", .int(signedDate)),
        ])
    }

    /// A legacy `in_app` / `latest_receipt_info` entry, Apple style (numbers as strings).
    static func legacyEntry(_ t: AppleTransaction, quirks: LegacyQuirks = LegacyQuirks()) -> WorldJSON {
        let purchase = t.purchaseDate ?? 0
        let original = t.originalPurchaseDate ?? purchase
        var pairs: [(String, WorldJSON?)] = [
            ("quantity", .string(String(t.quantity ?? 1))),
            ("product_id", .str(t.productID)),
            ("transaction_id", .string(t.transactionID)),
            ("original_transaction_id", .str(t.originalTransactionID)),
            ("purchase_date", .string(WorldTime.appleGMT(purchase + quirks.purchaseDateTextOffset))),
            ("purchase_date_ms", .string(String(purchase))),
            ("original_purchase_date", .string(WorldTime.appleGMT(original))),
            ("original_purchase_date_ms", .string(String(original))),
        ]
        if let expires = t.expiresDate {
            pairs.append(("expires_date", .string(WorldTime.appleGMT(expires))))
            pairs.append(("expires_date_ms", .string(String(expires))))
            pairs.append(("web_order_line_item_id", .str(t.webOrderLineItemID)))
            pairs.append(("is_in_intro_offer_period", .string("false")))
        }
        if let cancelled = t.revocationDate {
            pairs.append(("cancellation_date", .string(WorldTime.appleGMT(cancelled))))
            pairs.append(("cancellation_date_ms", .string(String(cancelled))))
            if t.revocationType == AppleTransaction.upgradeRevocationType {
                pairs.append(("is_upgraded", .string("true")))
            } else {
                pairs.append(("cancellation_reason", .string(String(t.revocationReason ?? 0))))
            }
        }
        pairs.append(("is_trial_period", .string("false")))
        pairs.append(("in_app_ownership_type", .str(t.inAppOwnershipType)))
        return .obj(pairs)
    }

    /// A full legacy `verifyReceipt` response with status 0 (or 21006).
    static func legacyResponse(
        app: WorldCatalog.App, environment: String, requestDate: Int64, entries: [WorldJSON],
        latest: [WorldJSON], status: Int64 = 0
    ) -> WorldJSON {
        var pairs: [(String, WorldJSON?)] = [
            ("status", .int(status)),
            ("environment", .string(environment)),
            (
                "receipt",
                .obj([
                    ("receipt_type", .string(environment == "Sandbox" ? "ProductionSandbox" : "Production")),
                    ("adam_id", .int(environment == "Sandbox" ? 0 : app.appAppleID)),
                    ("app_item_id", .int(environment == "Sandbox" ? 0 : app.appAppleID)),
                    ("bundle_id", .string(app.bundleID)),
                    ("application_version", .string("17")),
                    ("request_date", .string(WorldTime.appleGMT(requestDate))),
                    ("request_date_ms", .string(String(requestDate))),
                    ("original_application_version", .string("1.0")),
                    ("in_app", .array(entries)),
                ])
            ),
        ]
        if !latest.isEmpty {
            pairs.append(("latest_receipt_info", .array(latest)))
        }
        return .obj(pairs)
    }

    /// A bare error response (`{"status":21007}`), as Apple answers for redirected or malformed receipts.
    static func legacyStatusOnly(_ status: Int64) -> WorldJSON {
        if status == 21002 || (21100...21199).contains(status) {
            return .obj([("status", .int(status)), ("is-retryable", .bool(true))])
        }
        return .obj([("status", .int(status))])
    }
}
