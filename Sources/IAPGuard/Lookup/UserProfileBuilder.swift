/// Builds a ``LookupUserProfile`` from a lookup's evidence (which must hold the user's whole scope).
struct UserProfileBuilder {
    let context: LookupContext
    let fx: FXTable
    let referenceCurrency: String

    /// The transactions tied to `userID`: through an order, a submission, a credit or an owned token (not a token
    /// several accounts share: its first user did not buy the others' purchases), and the renewals of those
    /// subscriptions.
    func transactionIDs(of userID: String) -> Set<String> {
        let evidence = context.evidence
        var ids = Set<String>()
        for o in evidence.orders where o.userID == userID { if let t = o.transactionID { ids.insert(t) } }
        for s in evidence.sightings where s.submittedByUserID == userID { ids.insert(s.transactionID) }
        for (tx, credits) in context.creditsByTransaction where credits.contains(where: { $0.userID == userID }) {
            ids.insert(tx)
        }
        for t in evidence.transactions {
            if let token = t.appAccountToken?.lowercased(), context.tokenOwners[token]?.contains(userID) == true,
                context.sharedToken(of: t) == nil
            {
                ids.insert(t.transactionID)
            }
        }
        // The renewals of the user's subscriptions (a backend that credits a subscription once has no order or
        // credit of theirs).
        let originals = Set(
            evidence.transactions.filter { ids.contains($0.transactionID) }.compactMap(\.originalTransactionID))
        for t in evidence.transactions
        where t.originalTransactionID.map(originals.contains) == true && t.originalTransactionID != t.transactionID
            && t.inAppOwnershipType != "FAMILY_SHARED"
        {
            ids.insert(t.transactionID)
        }
        return ids
    }

    func profile(for userID: String) -> LookupUserProfile {
        let evidence = context.evidence
        let ids = transactionIDs(of: userID)
        let transactions = evidence.transactions.filter { ids.contains($0.transactionID) }
        // The user's own purchases: another account's (its order, or the owner of its token) that only reached
        // this user through a shared device's receipt, or a credit, was not paid by this user.
        let purchases = transactions.filter {
            $0.environment == "Production" && ["verified", "not-signed"].contains($0.verification)
                && $0.inAppOwnershipType != "FAMILY_SHARED"
                && (context.payer(of: $0.transactionID).map { $0.user == userID } ?? true)
        }
        var spend: Int64 = 0
        var unconverted = 0
        var refunds = 0
        var refunded: Int64 = 0
        // A StoreKit 1 purchase has no Apple price: its order's price stands in (as IAP-008 reads it).
        var orderPrice: [String: (price: Int64, currency: String)] = [:]
        for o in evidence.orders {
            guard let tx = o.transactionID, let price = o.price, price > 0, let currency = o.currency else { continue }
            if orderPrice[tx] == nil { orderPrice[tx] = (price, currency) }
        }
        for t in purchases {
            let paid =
                t.price.flatMap { p in t.currency.map { (price: p, currency: $0) } } ?? orderPrice[t.transactionID]
            let converted = paid.flatMap {
                fx.convert($0.price, from: $0.currency, to: referenceCurrency, at: t.purchaseDate ?? context.now)
            }
            if let converted { spend += converted } else { unconverted += 1 }
            if let refund = context.decisiveRefund(t.transactionID), refund.eventType != "REFUND_REVERSED" {
                refunds += 1
                let share = refund.revocationPercentage ?? t.revocationPercentage ?? 100_000
                if let converted { refunded += converted * share / 100_000 }
            }
        }
        let orders = evidence.orders.filter { $0.userID == userID }
        let credits = evidence.credits.filter { $0.userID == userID }
        let storefronts = Set(transactions.compactMap(\.storefront) + orders.compactMap(\.storefront))
        let countries = Set(orders.compactMap(\.userCountry))
        let times =
            orders.compactMap(\.createdAt) + credits.compactMap(\.creditedAt)
            + evidence.sightings.filter { $0.submittedByUserID == userID }.compactMap(\.receivedAt)
            + purchases.compactMap(\.purchaseDate)
        return LookupUserProfile(
            userID: userID, purchaseCount: purchases.count, spendRef: spend, referenceCurrency: referenceCurrency,
            unconvertedPurchases: unconverted, refundCount: refunds, refundedRef: refunded,
            sandboxPurchases: transactions.filter { ($0.environment ?? "Production") != "Production" }.count,
            storefronts: storefronts.sorted(), countries: countries.sorted(),
            standingCredits: credits.filter { $0.stands(at: context.now) }.count,
            reversedCredits: credits.filter { !$0.stands(at: context.now) }.count, orders: orders.count,
            tester: context.testers.contains(userID), firstSeen: times.min(), lastSeen: times.max())
    }
}
