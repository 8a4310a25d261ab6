/// Builds a lookup's timeline from its evidence: orders, Apple purchases, every copy received with its
/// verification outcome, credits and reversals, refunds, notifications and consumption requests.
struct TimelineBuilder {
    let context: LookupContext

    func build() -> [TimelineEvent] {
        let evidence = context.evidence
        var events: [TimelineEvent] = []
        func storefront(_ transactionID: String?) -> String? {
            transactionID.flatMap { context.transactionsByID[$0]?.storefront }
        }
        func add(
            _ at: Int64?, _ kind: TimelineEvent.Kind, _ description: String, source: String, transaction: String?,
            order: String? = nil, user: String? = nil, storefront explicit: String? = nil
        ) {
            guard let at else { return }
            events.append(
                TimelineEvent(
                    at: at, utc: StorefrontTime.utc(at),
                    local: StorefrontTime.local(at, storefront: explicit ?? storefront(transaction)), kind: kind,
                    description: description, source: source, transactionID: transaction, orderID: order, userID: user))
        }
        for o in evidence.orders {
            add(
                o.createdAt, .orderCreated,
                "Order \(o.orderID) created by \(o.userID ?? "?") for \(o.productID ?? "?") (\(ClaimVerdictJudge.money(o.price, o.currency)) shown, status \(o.status ?? "?"))",
                source: o.sourceRef, transaction: o.transactionID, order: o.orderID, user: o.userID,
                storefront: o.storefront)
        }
        for t in evidence.transactions {
            let ownership = t.inAppOwnershipType == "FAMILY_SHARED" ? ", family-shared" : ""
            let terms = t.termsDescription.map { "; \($0)" } ?? ""
            add(
                t.purchaseDate, .applePurchase,
                "Apple purchase \(t.transactionID): \(t.productID ?? "?") for \(ClaimVerdictJudge.money(t.price, t.currency)) in \(t.storefront ?? "?") (\(t.environment ?? "?")\(ownership), \(t.verification))\(terms)",
                source: "transactions view (best of \(LookupService.plural(Int(t.sightingCount), "copy")))",
                transaction: t.transactionID)
            let hasRevocationNotice = evidence.notifications.contains {
                $0.transactionID == t.transactionID && ["REFUND", "REVOKE"].contains($0.notificationType ?? "")
            }
            if let upgraded = t.revocationDate, t.isUpgradeRevocation {
                add(
                    upgraded, .upgraded,
                    "Subscription \(t.transactionID) upgraded: Apple ended it early for a higher plan (not a refund)",
                    source: "transactions revocation_date", transaction: t.transactionID)
            } else if let revoked = t.revocationDate, !hasRevocationNotice {
                let kind: TimelineEvent.Kind = t.revocationType == "FAMILY_REVOKE" ? .revoke : .refund
                let why =
                    t.revocationType == AppleTransaction.upgradeRevocationType
                    ? "marked upgraded, but a \(t.productType ?? "?") is never upgraded: a refund"
                    : t.revocationType ?? "reason \(t.revocationReason.map(String.init) ?? "?")"
                add(
                    revoked, kind, "Apple revoked \(t.transactionID) (\(why))",
                    source: "transactions revocation_date", transaction: t.transactionID)
            }
        }
        for s in evidence.sightings {
            var outcome = s.verification
            if let reason = s.verificationReason { outcome += " (\(reason))" }
            let by = s.submittedByUserID.map { ", submitted by \($0)" } ?? ""
            let order = s.submittedOrderID.map { " for order \($0)" } ?? ""
            add(
                s.receivedAt, .received,
                "Copy of \(s.transactionID) received as \(s.sourceKind)\(by)\(order): \(outcome)",
                source: "\(s.sourceName) \(s.sourceRef)", transaction: s.transactionID,
                order: s.submittedOrderID, user: s.submittedByUserID)
        }
        for c in evidence.credits {
            add(
                c.creditedAt, .credit,
                "Credit \(c.creditID): \(c.units.map(String.init) ?? "?") units of \(c.productID ?? "?") to \(c.userID ?? "?")",
                source: c.sourceRef, transaction: c.transactionID, order: c.orderID, user: c.userID)
            add(
                c.reversedAt, .creditReversed,
                "Credit \(c.creditID) of \(c.userID ?? "?") reversed (\(c.reversalReason ?? "no reason"))",
                source: c.sourceRef, transaction: c.transactionID, order: c.orderID, user: c.userID)
        }
        for n in evidence.notifications {
            let type = n.notificationType ?? "?"
            let kind: TimelineEvent.Kind
            switch type {
            case "REFUND": kind = .refund
            case "REVOKE": kind = .revoke
            case "REFUND_REVERSED": kind = .refundReversed
            case "REFUND_DECLINED": kind = .refundDeclined
            case "CONSUMPTION_REQUEST": kind = .consumptionRequest
            default: kind = .notification
            }
            var text = "Apple notification \(type)\(n.subtype.map { "/\($0)" } ?? "")"
            if let pct = n.revocationPercentage { text += ", \(ClaimVerdictJudge.percent(pct))" }
            if let reason = n.consumptionRequestReason { text += ", reason \(reason)" }
            if let grace = n.gracePeriodExpiresDate { text += ", grace period until \(StorefrontTime.shortUTC(grace))" }
            text += " (\(n.verification)\(n.verificationReason.map { ": \($0)" } ?? ""))"
            add(
                n.revocationDate ?? n.signedDate, kind, text, source: n.sourceRef,
                transaction: n.transactionID)
        }
        return events.sorted {
            if $0.at != $1.at { return $0.at < $1.at }
            if $0.kind.rank != $1.kind.rank { return $0.kind.rank < $1.kind.rank }
            return $0.description < $1.description
        }
    }
}
