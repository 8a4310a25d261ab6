extension LookupEvidence.Transaction {
    /// Apple's `offerType` in words (a value Apple adds later is named by its number).
    public static func offerName(_ type: Int64) -> String {
        switch type {
        case 1: return "introductory offer"
        case 2: return "promotional offer"
        case 3: return "offer code"
        case 4: return "win-back offer"
        default: return "offer type \(type)"
        }
    }

    /// What a support person needs about the purchase beyond product and price, one phrase each: the Apple
    /// Account, the offer, the billing plan and commitment, Advanced Commerce items and refunds, and any signed
    /// field iapguard does not model. `nil` when the transaction carries none of them.
    public var termsDescription: String? {
        var parts: [String] = []
        if let appTransactionID { parts.append("Apple Account \(appTransactionID)") }
        if offerType != nil || offerIdentifier != nil || offerDiscountType != nil {
            var offer = offerType.map(Self.offerName) ?? "offer"
            if let offerIdentifier { offer += " \"\(offerIdentifier)\"" }
            let mode = [offerDiscountType, offerPeriod].compactMap { $0 }
            if !mode.isEmpty { offer += " (\(mode.joined(separator: ", ")))" }
            parts.append(offer)
        }
        if let billingPlanType {
            var plan = "billing \(billingPlanType)"
            if let commitment = commitmentText { plan += " (\(commitment))" }
            parts.append(plan)
        } else if let commitment = commitmentText {
            parts.append(commitment)
        }
        if let commerce = advancedCommerceText { parts.append(commerce) }
        if let unknown = unknownFieldNames, !unknown.isEmpty {
            parts.append("unmodelled signed fields: \(unknown.joined(separator: ", "))")
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }

    /// "commitment period 3 of 12, 119.88 USD until …" from `commitmentInfo`.
    var commitmentText: String? {
        guard let text = commitmentInfo, let info = try? JSONObject.parse(text.utf8) else { return nil }
        var words: [String] = []
        if let number = try? info.int64("billingPeriodNumber"), let total = try? info.int64("totalBillingPeriods") {
            words.append("commitment period \(number) of \(total)")
        }
        if let price = try? info.int64("commitmentPrice") {
            words.append("commitment price \(ClaimVerdictJudge.money(price, currency))")
        }
        if let expires = try? info.int64("commitmentExpiresDate") {
            words.append("commitment ends \(StorefrontTime.shortUTC(expires))")
        }
        return words.isEmpty ? "commitment" : words.joined(separator: ", ")
    }

    /// "Advanced Commerce: 2 items, 1 refund of 5.00 USD" from `advancedCommerceInfo`.
    var advancedCommerceText: String? {
        guard let text = advancedCommerceInfo, let info = try? JSONObject.parse(text.utf8) else { return nil }
        let items = (try? info.objects("items")) ?? []
        var refunds = 0
        var refunded: Int64 = 0
        var revoked = 0
        for item in items {
            for refund in (try? item.objects("refunds")) ?? [] {
                refunds += 1
                let (sum, overflow) = refunded.addingReportingOverflow((try? refund.int64("refundAmount")) ?? 0)
                if !overflow { refunded = sum }
            }
            if (try? item.int64("revocationDate")) != nil { revoked += 1 }
        }
        var words = ["Advanced Commerce: \(LookupService.plural(items.count, "item"))"]
        if refunds > 0 {
            words.append("\(LookupService.plural(refunds, "refund")) of \(ClaimVerdictJudge.money(refunded, currency))")
        }
        if revoked > 0 { words.append("\(revoked) revoked") }
        return words.joined(separator: ", ")
    }

    /// The keys of `unknownFields`, in the order Apple signed them.
    var unknownFieldNames: [String]? {
        guard let text = unknownFields, let object = try? JSONObject.parse(text.utf8) else { return nil }
        return object.document.members(ofObject: object.index).map { object.document.string(at: $0.key) }
    }
}
