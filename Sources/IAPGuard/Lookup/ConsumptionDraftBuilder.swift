/// Derives a ``ConsumptionDraft`` for one `CONSUMPTION_REQUEST` notification.
///
/// Apple asks for consumption data about consumables and auto-renewable subscriptions; the v2 request accepts
/// every product type, so any known type is drafted. The body keeps Apple's v2 constraints (checked by
/// ``ConsumptionDraft/AppleRequest/violations(productType:)``): no `consumptionPercentage` for an auto-renewable
/// subscription, 0 unless delivered, above 0 with `GRANT_PRORATED`.
struct ConsumptionDraftBuilder {
    /// What the builder knows about the paying customer.
    struct Customer {
        var profile: LookupUserProfile?
        /// The customer's lifetime spend and refunds in USD milliunits (nil when not convertible).
        var lifetimePurchasedUSD: Int64?
        var lifetimeRefundedUSD: Int64?
        /// Refunds of other purchases in the 90 days before the request.
        var recentRefunds: Int
        /// Whether an active refund-abuse finding (IAP-016) names the customer.
        var refundAbuseFinding: Bool
    }

    let context: LookupContext
    let customerConsented: Bool

    static let day: Int64 = 86_400_000

    /// Apple's product types (`type` in the signed transaction).
    static let productTypes: Set<String> = [
        "Consumable", "Non-Consumable", "Auto-Renewable Subscription", "Non-Renewing Subscription",
    ]
    /// The types the older `ConsumptionRequestV1` endpoint takes.
    static let v1ProductTypes: Set<String> = ["Consumable", "Auto-Renewable Subscription"]

    func draft(for notification: LookupEvidence.Notification, customer: Customer) -> ConsumptionDraft? {
        guard notification.notificationType == "CONSUMPTION_REQUEST", let tx = notification.transactionID else {
            return nil
        }
        var draft = ConsumptionDraft(
            state: .notDrafted, transactionID: tx, notificationUUID: notification.notificationUUID,
            requestedAt: notification.signedDate, consumptionRequestReason: notification.consumptionRequestReason,
            endpoint: ConsumptionDraft.endpoint(for: tx))
        guard let t = context.transactionsByID[tx] else {
            draft.reason = "transaction \(tx) is not in the store, so its delivery cannot be judged"
            return draft
        }
        guard let productType = t.productType, Self.productTypes.contains(productType) else {
            draft.reason =
                "the product type of \(t.productID ?? "?") is \(t.productType.map { "'\($0)'" } ?? "unknown"), "
                + "so Apple's consumption fields cannot be chosen"
            return draft
        }
        let autoRenewable = productType == "Auto-Renewable Subscription"
        guard notification.verification == "verified" else {
            draft.reason = "the CONSUMPTION_REQUEST notification is \(notification.verification), not verified"
            return draft
        }
        guard customerConsented else {
            draft.reason =
                "customer consent is unknown: Apple only accepts consumption data the customer consented to share; "
                + "once support has the customer's consent, rerun with --customer-consented"
            return draft
        }
        let at = notification.signedDate ?? context.now
        let credits = context.credits(tx).filter { ($0.creditedAt ?? 0) <= at }
        let standing = credits.filter { $0.stands(at: at) }
        let rightProduct = standing.filter { $0.productID == nil || $0.productID == t.productID }
        let deliveredUnits = rightProduct.reduce(Int64(0)) { Money.saturatingSum($0, max($1.units ?? 0, 0)) }
        let expected = context.expectedUnits(t) ?? deliveredUnits
        var basis: [String] = []

        // Delivery and consumption, from the credits standing when Apple asked.
        let delivery: (String, Int)
        if !rightProduct.isEmpty {
            delivery = ("DELIVERED", 0)
            basis.append(
                "deliveryStatus: credit(s) \(rightProduct.map(\.creditID).joined(separator: ", ")) stood when Apple asked."
            )
        } else if !standing.isEmpty {
            delivery = ("UNDELIVERED_WRONG_ITEM", 2)
            basis.append(
                "deliveryStatus: only another product was credited (\(standing.compactMap(\.productID).joined(separator: ", ")))."
            )
        } else {
            delivery = ("UNDELIVERED_OTHER", 5)
            basis.append("deliveryStatus: no credit stood for this transaction when Apple asked.")
        }
        // Spending, when the backend exports it for every delivered credit (observed before Apple asked);
        // otherwise delivery stands in for it and the approver must check the in-app balance.
        let tracked =
            !rightProduct.isEmpty
            && rightProduct.allSatisfy { $0.consumedUnits != nil && ($0.consumedAt ?? .max) <= at }
        let usedUnits =
            tracked
            ? rightProduct.reduce(Int64(0)) {
                Money.saturatingSum($0, min(max($1.consumedUnits ?? 0, 0), max($1.units ?? 0, 0)))
            }
            : deliveredUnits
        // Apple rejects a non-zero percentage unless the purchase was delivered.
        let percentage: Int =
            delivery.1 != 0
            ? 0
            : (expected > 0 ? Int(min(usedUnits * 100_000 / expected, 100_000)) : (usedUnits > 0 ? 100_000 : 0))
        let consumptionStatus = percentage == 0 ? 1 : (percentage >= 100_000 ? 3 : 2)
        if autoRenewable {
            basis.append(
                "consumptionPercentage: omitted; Apple computes the consumption of an auto-renewable subscription itself."
            )
        } else if delivery.1 != 0 {
            basis.append("consumptionPercentage 0: Apple requires 0 when the purchase was not delivered.")
        } else if tracked {
            basis.append(
                "consumptionPercentage \(percentage) (milli-percent) = \(usedUnits) of \(expected) units spent before Apple asked, "
                    + "from the backend's consumption data (credits.consumed_units).")
        } else {
            basis.append(
                "consumptionPercentage \(percentage) (milli-percent) = \(deliveredUnits) of \(expected) units delivered and not reversed; "
                    + "the ledger records delivery, not spending: lower it if the in-app balance shows unspent units.")
        }

        // Refund preference, from the customer's history.
        let preference: (String?, Int)
        if delivery.1 != 0 {
            preference = ("GRANT_FULL", 1)
            basis.append("refundPreference: the purchase was not delivered, so a refund is fair.")
        } else if customer.refundAbuseFinding || customer.recentRefunds >= 2 {
            preference = ("DECLINE", 2)
            basis.append(
                "refundPreference: \(customer.recentRefunds) other refund(s) in the 90 days before the request\(customer.refundAbuseFinding ? " and an active IAP-016 refund-abuse finding" : "")."
            )
        } else if tracked && !autoRenewable && percentage > 0 && percentage < 100_000 {
            preference = ("GRANT_PRORATED", 3)
            basis.append(
                "refundPreference: part of the purchase is unspent by the backend's consumption data and there is no "
                    + "refund pattern: a prorated refund of the unspent share.")
        } else {
            preference = (nil, 3)
            basis.append("refundPreference: delivered and no refund pattern: no preference.")
        }

        let tenureDays = customer.profile?.firstSeen.map { max(at - $0, 0) / Self.day }
        basis.append(
            "accountTenure: from the first activity in the store (\(tenureDays.map { "\($0) days" } ?? "unknown")), not the account's creation date."
        )
        basis.append(
            "lifetimeDollarsPurchased/Refunded: the customer's purchases and refunds in the store, in USD via the FX table."
        )
        basis.append("playTime and userStatus: unknown to iapguard (0 = undeclared); fill in from the app if known.")
        basis.append(
            "sampleContentProvided: false; set true if the app offered a free sample or trial before the purchase.")
        let writesV1 = Self.v1ProductTypes.contains(productType)
        if !writesV1 {
            basis.append(
                "No ConsumptionRequestV1 body: the older endpoint takes consumables and auto-renewable subscriptions only."
            )
        }
        basis.append(
            "DRAFT: a person must review and approve this before it is sent to Apple. iapguard never sends it.")

        draft.state = .draft
        draft.appleRequest = ConsumptionDraft.AppleRequest(
            customerConsented: true, consumptionPercentage: autoRenewable ? nil : percentage,
            deliveryStatus: delivery.0, refundPreference: preference.0, sampleContentProvided: false)
        if writesV1 {
            draft.appleRequestV1 = ConsumptionDraft.AppleRequestV1(
                accountTenure: Self.tenureBucket(tenureDays), appAccountToken: t.appAccountToken ?? "",
                consumptionStatus: consumptionStatus, customerConsented: true, deliveryStatus: delivery.1,
                lifetimeDollarsPurchased: Self.dollarBucket(customer.lifetimePurchasedUSD),
                lifetimeDollarsRefunded: Self.dollarBucket(customer.lifetimeRefundedUSD), platform: 1, playTime: 0,
                refundPreference: preference.1, sampleContentProvided: false, userStatus: 0)
        }
        draft.basis = basis
        return draft
    }

    /// Apple's `lifetimeDollarsPurchased` / `lifetimeDollarsRefunded` bucket for USD milliunits.
    static func dollarBucket(_ usdMilli: Int64?) -> Int {
        guard let usdMilli else { return 0 }
        switch usdMilli {
        case ..<1: return 1
        case ..<50_000: return 2
        case ..<100_000: return 3
        case ..<500_000: return 4
        case ..<1_000_000: return 5
        case ..<2_000_000: return 6
        default: return 7
        }
    }

    /// Apple's `accountTenure` bucket for an age in days.
    static func tenureBucket(_ days: Int64?) -> Int {
        guard let days else { return 0 }
        switch days {
        case ..<3: return 1
        case ..<10: return 2
        case ..<30: return 3
        case ..<90: return 4
        case ..<180: return 5
        case ..<365: return 6
        default: return 7
        }
    }
}
