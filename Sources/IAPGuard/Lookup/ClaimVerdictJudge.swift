/// Decides the ``ClaimVerdict`` for each transaction (or order) of a lookup from the evidence, the way the
/// rules would, and explains it in plain language.
struct ClaimVerdictJudge {
    let context: LookupContext

    static let forgeryAnomalies = [
        "non-numeric-id", "date-mismatch", "expiry-far-future", "product-outside-bundle", "purchase-after-request",
        "original-after-purchase", "date-before-app-store", "date-out-of-range", "quantity-not-positive",
    ]

    /// The verdict about one transaction id, or `nil` when the store knows nothing about it at all.
    func verdict(for transactionID: String) -> ClaimVerdict? {
        let c = context
        let sightings = c.sightings(transactionID)
        let orders = c.orders(transactionID)
        let credits = c.credits(transactionID)
        let canonical = c.transactionsByID[transactionID]
        // Rows of a backend item that is no App Store product (a promotion's bonus written beside the purchase's
        // own row, naming the transaction) are not credits of the purchase, as IAP-001 and IAP-018 hold.
        let bonusRows = c.bonusRows(of: canonical, among: credits.filter { $0.stands(at: c.now) })
        let standing = credits.filter { $0.stands(at: c.now) && !bonusRows.contains($0.creditID) }
        let receivers = Array(Set(standing.compactMap(\.userID))).sorted()
        if canonical == nil, sightings.isEmpty, orders.isEmpty, credits.isEmpty { return nil }

        func make(_ code: ClaimVerdict.Code, _ headline: String) -> ClaimVerdict {
            var v = ClaimVerdict(code: code, headline: headline, transactionID: transactionID)
            v.orderIDs = orders.map(\.orderID)
            v.paidBy = c.payer(of: transactionID)?.user
            v.creditedTo = receivers
            return v
        }
        let creditText = receivers.isEmpty ? "nothing was credited" : "credited to " + receivers.joined(separator: ", ")

        // Genuine Apple data for another app or environment: a bundle mismatch (IAP-004), not a forgery.
        let markers = forgeryMarkers(transactionID, sightings: sightings)
        let allFailed = !sightings.isEmpty && sightings.allSatisfy { $0.verification == "failed" }
        if canonical == nil, allFailed, markers.isEmpty,
            let genuine = sightings.first(where: {
                VerificationFailure(rawValue: $0.verificationReason ?? "")?.isGenuineButNotOurs == true
            })
        {
            let bundle = genuine.bundleID ?? "an unknown bundle"
            if genuine.verificationReason == VerificationFailure.wrongEnvironment.rawValue {
                // A genuine purchase in an environment we do not accept (Sandbox): IAP-017's, like any Sandbox
                // purchase.
                let env = genuine.environment ?? "another environment"
                // Xcode and LocalTesting payloads are signed on a developer's Mac: their signature is never
                // checked, so nothing says they are genuine, only that they claim a test environment.
                let headline =
                    AppleEnvironment(appleValue: env)?.isSignedByApple == false
                    ? "Sandbox: transaction \(transactionID) claims to be an \(env) test purchase in \(bundle) (signed on a developer's Mac, never by Apple; its signature is not checked); no money was charged; \(creditText)."
                    : "Sandbox: transaction \(transactionID) is a genuine \(env) purchase in \(bundle), an environment not accepted; no money was charged; \(creditText)."
                return sandboxVerdict(make(.sandbox, headline), receivers: receivers)
            }
            var v = make(
                .wrongApp,
                "Wrong app: transaction \(transactionID) is a genuine Apple purchase in \(bundle)\(genuine.environment.map { " (\($0))" } ?? ""), not one of our apps or environments; \(creditText)."
            )
            v.details.append(
                "Apple's signature is valid; verification refused it: \(genuine.verificationReason ?? "?") (\(genuine.verificationDetail ?? "no detail"))."
            )
            if !receivers.isEmpty {
                v.action =
                    "Reverse the credit for \(receivers.joined(separator: ", ")): the purchase belongs to another app."
            } else {
                v.details.append("The backend refused it: nothing to do for the customer.")
            }
            return v
        }

        // Forged or tampered data.
        if canonical == nil && allFailed || !markers.isEmpty {
            var v = make(
                .forged,
                allFailed
                    ? "Forged or tampered: every copy of transaction \(transactionID) failed verification; \(creditText)."
                    : "Forged: transaction \(transactionID) carries forgery markers (\(markers.joined(separator: ", "))); \(creditText)."
            )
            let reasons = Set(sightings.compactMap { $0.verification == "failed" ? $0.verificationReason : nil })
            if !reasons.isEmpty {
                v.details.append("Verification failed: \(reasons.sorted().joined(separator: ", ")).")
            }
            if !receivers.isEmpty {
                v.action = "Reverse the credit for \(receivers.joined(separator: ", ")); Apple never charged for it."
            } else {
                v.details.append("The backend refused it: nothing to do for the customer.")
            }
            return v
        }
        guard let t = canonical else {
            // Apple never confirmed this transaction.
            if !standing.isEmpty {
                var v = make(
                    .unverifiable,
                    "Unconfirmed: transaction \(transactionID) was \(creditText), but Apple never confirmed it.")
                v.details.append("No copy of the transaction was ever received from Apple or the app.")
                if !Self.isAppleID(transactionID) {
                    v.details.append(
                        "\(transactionID) is not an App Store transaction id (Apple's are digits): if the backend's ledger also holds other stores' payments (web, another platform), check there first."
                    )
                }
                v.action = "Do not grant more; check whether the data was pulled, else reverse the credit."
                return v
            }
            var v = make(
                .orderNotPaid,
                "No payment known: order(s) \(orders.map(\.orderID).joined(separator: ", ")) name transaction \(transactionID), but Apple never confirmed it and \(creditText)."
            )
            if orders.isEmpty {
                v.code = .unverifiable
                v.headline = "Unconfirmed: transaction \(transactionID) only appears in reversed credits."
            }
            v.details.append("If the customer shows an Apple receipt, the data may not have been pulled yet.")
            return v
        }
        if t.verification == "unverified" {
            var v = make(
                .unverifiable,
                "Unverifiable: transaction \(transactionID) was never checked against Apple; \(creditText).")
            v.details.append("Only unverified copies were received (\(t.sightingCount)).")
            return v
        }
        let product = t.productID ?? "?"
        let price = Self.money(t.price, t.currency)

        // Sandbox: no money changed hands.
        if let env = t.environment, env != "Production" {
            return sandboxVerdict(
                make(
                    .sandbox,
                    "Sandbox: transaction \(transactionID) (\(product)) is a \(env) purchase; no money was charged; \(creditText)."
                ), receivers: receivers)
        }

        // Paid in another app.
        let orderBundles = Set(orders.compactMap(\.bundleID)).subtracting([t.bundleID].compactMap { $0 })
        if let bundle = t.bundleID, !c.apps.isEmpty, !c.apps.contains(bundle) || !orderBundles.isEmpty {
            let known = c.apps.contains(bundle)
            var v = make(
                .wrongApp,
                known
                    ? "Wrong app: transaction \(transactionID) was paid in \(bundle) but redeemed for an order in \(orderBundles.sorted().joined(separator: ", ")); \(creditText)."
                    : "Wrong app: transaction \(transactionID) was paid in \(bundle), not one of the configured apps; \(creditText)."
            )
            v.details.append("Apple's record: \(product) in \(bundle), \(price).")
            if !receivers.isEmpty {
                v.action =
                    "Reverse the credit for \(receivers.joined(separator: ", ")): the purchase belongs to another app."
            }
            return v
        }

        let familyShared = t.inAppOwnershipType == "FAMILY_SHARED"
        // What the purchase granted: the ledger's rows, or the catalog's units if more (a row edited down in place
        // to the share a prorated refund left the customer), as IAP-015 holds.
        let granted = max(
            credits.reduce(Int64(0)) { Money.saturatingSum($0, max($1.units ?? 0, 0)) }, c.expectedUnits(t) ?? 0
        )
        // Less what clawback ledger rows took back of them, as IAP-015 counts it.
        let clawedBack = c.clawedBackUnits(transactionID, standing: standing)
        let standingUnits = Money.saturatingSum(
            standing.reduce(Int64(0)) { Money.saturatingSum($0, $1.units ?? 0) }, -clawedBack)
        var lookAlike: String? = familyShared ? "family-sharing" : nil
        var notes: [String] = []

        // Refunds and revocations.
        if let refund = c.decisiveRefund(transactionID) {
            let when = refund.eventDate.map(StorefrontTime.shortUTC) ?? "an unknown date"
            if refund.eventType == "REFUND_REVERSED" {
                lookAlike = lookAlike ?? "refund-reversed"
                notes.append("Apple reversed an earlier refund on \(when): the credit rightly stands.")
            } else {
                let share = refund.revocationPercentage ?? refundShare(transactionID) ?? 100_000
                let allowed = Self.keptShare(of: granted, refundedMilli: share)
                let what = refund.eventType == "REVOKE" ? "revoked" : "refunded"
                let pct = share == 100_000 ? "" : " (\(Self.percent(share)))"
                if familyShared || t.revocationType == "FAMILY_REVOKE" { lookAlike = "family-sharing" }
                if standingUnits <= allowed {
                    let kept =
                        standingUnits > 0
                        ? "\(standingUnits) of \(granted) units stand, no more than the share the refund left the customer."
                        : "the credit was reversed."
                    var v = make(
                        .refundedClawedBack,
                        "Refunded and clawed back: Apple \(what) transaction \(transactionID) (\(product), \(price))\(pct) on \(when); \(kept)"
                    )
                    v.lookAlike = lookAlike
                    for credit in credits where credit.reversedAt != nil {
                        v.details.append(
                            "Credit \(credit.creditID) for \(credit.userID ?? "?") reversed \(credit.reversedAt.map(StorefrontTime.shortUTC) ?? "") (\(credit.reversalReason ?? "no reason"))."
                        )
                    }
                    if clawedBack > 0 {
                        for row in c.clawbacksByTransaction[transactionID] ?? [] {
                            v.details.append(
                                "Ledger row \(row.creditID) took back \(-(row.units ?? 0)) units from \(row.userID ?? "?") \(row.creditedAt.map(StorefrontTime.shortUTC) ?? "") (\(row.reversalReason ?? "no reason"))."
                            )
                        }
                    }
                    return v
                }
                // A subscription period refunded after it ended: its access was used up (as IAP-015 holds).
                if t.productType == "Auto-Renewable Subscription", let expires = t.expiresDate,
                    let refunded = refund.eventDate, expires <= refunded
                {
                    var v = make(
                        .refundedAfterPeriod,
                        "Refunded after the period ended: Apple \(what) transaction \(transactionID) (\(product), \(price))\(pct) on \(when), after its period ended on \(StorefrontTime.shortUTC(expires)); the access was used up, so there is nothing to claw back."
                    )
                    v.lookAlike = lookAlike
                    v.details = notes
                    return v
                }
                var v = make(
                    .refundedStillCredited,
                    "Refunded but still credited: Apple \(what) transaction \(transactionID) (\(product), \(price))\(pct) on \(when), but \(standingUnits) of \(granted) units still stand."
                )
                v.lookAlike = lookAlike
                let age = c.now - (refund.eventDate ?? c.now)
                if age < c.graceMillis {
                    v.details.append(
                        "The refund is \(age / 3_600_000) h old, within the \(c.graceMillis / 3_600_000) h grace period."
                    )
                }
                v.action = "Claw back \(standingUnits - allowed) units from \(receivers.joined(separator: ", "))."
                return v
            }
        }

        // A Family Sharing copy no one credited: the member's access, not a payment (as IAP-014 holds).
        if standing.isEmpty, familyShared {
            let purchase = c.organiserPurchase(of: t)
            let organiser = purchase.flatMap { c.payer(of: $0.transactionID)?.user }
            var v = make(
                .familyShared,
                "Family Sharing copy, nothing owed: transaction \(transactionID) gives a family member access to \(product) bought by \(organiser ?? "the family organiser")\(purchase.map { " (transaction \($0.transactionID))" } ?? ""); it was not a payment."
            )
            // The member who got the copy did not pay for it.
            v.paidBy = organiser
            v.lookAlike = "family-sharing"
            v.details = notes
            return v
        }

        // A restore of a purchase already credited: nothing is owed.
        if standing.isEmpty, let (creditedID, credit) = c.creditOfRestoredPurchase(t) {
            let holder = credit.userID ?? "?"
            let when = credit.creditedAt.map(StorefrontTime.shortUTC) ?? "an unknown date"
            // (The original purchase, whose own credit was reversed, is credited through a restored copy: the
            // account was deleted and the customer restored it into a new one.)
            var v = make(
                .paidAndCredited,
                t.originalTransactionID == transactionID
                    ? "Paid and credited through a restore: transaction \(transactionID) (\(product), \(price)) has no standing credit of its own, but its restored copy, transaction \(creditedID), was credited to \(holder) on \(when); the customer holds it once."
                    : "Restored, nothing owed: transaction \(transactionID) restores \(product) of transaction \(creditedID), credited to \(holder) on \(when); a restore costs nothing."
            )
            v.lookAlike = "restore"
            v.details = notes
            return v
        }

        // A plan Apple ended early for a higher one (an upgrade, not a refund) with nothing standing: the
        // entitlement went on with the new plan's transaction, which has its own verdict.
        if standing.isEmpty, let upgraded = c.upgradeDate(t) {
            var v = upgradedVerdict(make(.upgraded, ""), t, at: upgraded, credits: credits)
            v.details = notes + v.details
            return v
        }

        // A renewal credited through its original transaction: the backend keys the subscription by it and its rows
        // there add up to the periods Apple sold so far (as IAP-014 holds).
        if standing.isEmpty, let rows = c.creditsThroughOriginal(of: t), let original = t.originalTransactionID {
            let days = rows.reduce(Int64(0)) { Money.saturatingSum($0, $1.units ?? 0) }
            var v = make(
                .paidAndCredited,
                "Paid and credited through its original transaction: renewal \(transactionID) (\(product), \(price)) has no credit of its own, but the backend keys the subscription by original transaction \(original), whose \(rows.count) standing row(s) add up to \(days) days, the periods Apple sold up to this renewal."
            )
            v.lookAlike = "subscription-renewal"
            v.creditedTo = Array(Set(rows.compactMap(\.userID))).sorted()
            v.details = notes
            return v
        }

        // A renewal of an app whose backend credits each subscription once: nothing is owed on the renewal itself.
        if standing.isEmpty, let policy = c.renewalCreditedOnce(t), let original = t.originalTransactionID {
            let until = t.expiresDate.map { " until \(StorefrontTime.shortUTC($0))" } ?? ""
            var v = make(
                .subscriptionRenewal,
                "Subscription renewal, credited once: transaction \(transactionID) renews \(product) (original transaction \(original))\(until); this backend credits a subscription once and keeps it by its expiry (\(policy.credited) of \(policy.renewals) renewals of \(t.bundleID ?? "the app") have a credit), so the renewal has no credit of its own."
            )
            v.lookAlike = "subscription-renewal"
            v.details = notes
            let first = [original] + (c.familyByOriginal[original] ?? []).map(\.transactionID)
            if let (id, credit) = first.lazy.compactMap({ id in
                c.credits(id).first(where: { $0.stands(at: c.now) }).map { (id, $0) }
            }).first {
                v.details.append(
                    "Transaction \(id) of the subscription is credited to \(credit.userID ?? "?") on \(credit.creditedAt.map(StorefrontTime.shortUTC) ?? "an unknown date")."
                )
            } else {
                v.details.append(
                    "No standing credit of the subscription's first purchase (transaction \(original)) is in the store."
                )
            }
            let payer = c.payer(of: transactionID)?.user ?? c.payer(of: original)?.user
            v.action =
                "Check in the backend that \(payer ?? "the subscriber") has \(product) active\(until); Apple charged for the renewal."
            return v
        }

        // Free: Apple charged nothing, so nothing is owed (as IAP-014 holds).
        if standing.isEmpty, t.price == 0 {
            var v = make(
                .freeNotCredited,
                "Free, nothing owed: transaction \(transactionID) (\(product), \(price)) cost the customer nothing (a free trial or offer), and nothing credits it yet."
            )
            v.details = notes
            v.action =
                "If the customer has no access, ask them to open the app (or restore purchases) so that the backend credits it."
            return v
        }

        // A product that grants nothing (catalog units 0: a tip, a donation): no credit is written, none is owed
        // (as IAP-014 holds).
        if standing.isEmpty, c.expectedUnits(t) == 0 {
            var v = make(
                .nothingToCredit,
                "Paid, nothing to credit: transaction \(transactionID) (\(product), \(price)) is for a product the catalog credits 0 units for (a tip or a donation), so the backend has nothing to write."
            )
            v.details = notes
            return v
        }

        // A subscription period credited until it ended: its credit was reversed only at or after Apple's expiry of
        // it (a backend that ends an entitlement by reversing its row, an account deleted afterwards), so nothing
        // was taken from the customer; up to IAP-014's `clock_skew_minutes` early is the backend's clock (as IAP-014
        // holds).
        if standing.isEmpty, t.productType == "Auto-Renewable Subscription", let expires = t.expiresDate,
            let ended = credits.first(where: { ($0.reversedAt ?? .min) >= expires - c.clockSkewMillis })
        {
            var v = make(
                .paidAndCredited,
                "Paid and credited for its whole period: transaction \(transactionID) (\(product), \(price)) was credited to \(ended.userID ?? "?") on \(ended.creditedAt.map(StorefrontTime.shortUTC) ?? "an unknown date") for the period until \(StorefrontTime.shortUTC(expires)); the credit was reversed only after the period ended (\(ended.reversedAt.map(StorefrontTime.shortUTC) ?? "?"), \(ended.reversalReason ?? "no reason")), so nothing was taken from the customer."
            )
            v.details = notes
            return v
        }

        // Never credited.
        if standing.isEmpty {
            let payer = c.payer(of: transactionID)
            let reversed = credits.filter { !$0.stands(at: c.now) }
            for credit in reversed {
                notes.append(
                    "Credit \(credit.creditID) was reversed \(credit.reversedAt.map(StorefrontTime.shortUTC) ?? "") (\(credit.reversalReason ?? "no reason")) without an Apple refund."
                )
            }
            let age = c.now - (t.purchaseDate ?? c.now)
            if age < c.graceMillis {
                var v = make(
                    .pendingCredit,
                    "Paid, not credited yet: transaction \(transactionID) (\(product), \(price)) is \(age / 3_600_000) h old, within the \(c.graceMillis / 3_600_000) h grace period."
                )
                v.details = notes
                v.action = "Wait for the backend to confirm, or ask the customer to reopen the app."
                return v
            }
            var v = make(
                .missingCredit,
                "Paid but never credited: \(payer?.user ?? "the customer") paid \(price) for \(product) (transaction \(transactionID)) and nothing stands credited."
            )
            v.details = notes
            if let payer { v.details.append("\(payer.user) \(payer.how).") }
            if let replaced = c.upgradeReplaced(by: t) { v.details.append(upgradeNote(t, replaced: replaced)) }
            let units = c.expectedUnits(t).map { "\($0) units of " } ?? ""
            v.action =
                "Grant \(units)\(product) to \(payer?.user ?? "the paying account") for transaction \(transactionID)."
            v.lookAlike = lookAlike
            return v
        }

        // A multi-quantity purchase credited one row per item, or a subscription's days credited in parts (as
        // IAP-001 and IAP-019 hold): one credit.
        let perItem = c.creditOfItemRows(t, standing: standing)
        if let merged = perItem {
            let grace = c.gracePeriodExpiresDate(after: t).map {
                " and the billing grace period Apple granted after it (until \(StorefrontTime.shortUTC($0)))"
            }
            if t.productType == "Non-Consumable" {
                notes.append(
                    "Unlocked \(standing.count) times for the same account: a non-consumable unlocks once (a restore on a new device), nothing was gained."
                )
            } else {
                let keyedByOriginal =
                    (t.quantity ?? 1) <= 1
                    && c.entitledPeriodMillis(t).map { LookupContext.days(merged.units ?? 0, fitIn: $0) } != true
                notes.append(
                    (t.quantity ?? 1) > 1
                        ? "Credited as \(standing.count) rows, one per item of a quantity-\(t.quantity ?? 1) purchase."
                        : keyedByOriginal
                            ? "Credited as \(standing.count) rows adding up to \(merged.units ?? 0) days, within the periods Apple sold under this original transaction (the backend credits each period against it; no renewal has a credit of its own)."
                            : "Credited as \(standing.count) rows adding up to \(merged.units ?? 0) days, within the subscription period Apple sold (extensions included)\(grace ?? "")."
                )
            }
        }

        // Credited more than once: one Apple charge, replayed.
        if standing.count >= 2, perItem == nil {
            var v = make(
                .replayed,
                "Replayed, not charged twice: Apple charged once for transaction \(transactionID) (\(product), \(price)), but it is credited \(standing.count) times (to \(receivers.joined(separator: ", ")))."
            )
            v.details = notes
            for credit in standing {
                v.details.append(
                    "Credit \(credit.creditID): \(credit.units.map(String.init) ?? "?") units to \(credit.userID ?? "?") on \(credit.creditedAt.map(StorefrontTime.shortUTC) ?? "?")\(credit.orderID.map { " for order \($0)" } ?? "")."
                )
            }
            let keep = v.paidBy ?? receivers.first ?? "the payer"
            v.action = "Keep one credit for \(keep); reverse the other \(standing.count - 1)."
            v.lookAlike = lookAlike
            return v
        }

        // One standing credit: to the right account? the right item?
        let credit = perItem ?? standing[0]
        let receiver = credit.userID ?? "?"
        if !familyShared, let expected = expectedReceivers(t, credit: credit) {
            // A credit that moved from the payer's account (its own credit reversed when this one was granted:
            // an account merge, a support transfer) is where it belongs now (IAP-011 and IAP-012 hold the same).
            if let moved = c.transferredCredit(to: credit, from: expected.accounts, among: credits) {
                var v = make(
                    .paidAndCredited,
                    "Paid and credited after a transfer: transaction \(transactionID) (\(product), \(price)) was credited to \(moved.userID ?? "?"), then moved to \(receiver) on \(credit.creditedAt.map(StorefrontTime.shortUTC) ?? "an unknown date")."
                )
                v.lookAlike = "account-transfer"
                v.details =
                    notes + [
                        "Credit \(moved.creditID) of \(moved.userID ?? "?") was reversed \(moved.reversedAt.map(StorefrontTime.shortUTC) ?? "") (\(moved.reversalReason ?? "no reason")) when credit \(credit.creditID) was granted to \(receiver)."
                    ]
                return v
            }
            // A subscription that moved to a new account, which restored it (as IAP-012 and IAP-013 hold).
            if let restore = c.restoreOfMovedSubscription(t, to: credit, from: expected.accounts) {
                var v = make(
                    .paidAndCredited,
                    "Paid and credited after a move: transaction \(transactionID) renews \(product) (\(price)) bought by \(expected.accounts.sorted().joined(separator: ", ")); \(receiver) restored the subscription on \(restore.receivedAt.map(StorefrontTime.shortUTC) ?? "an unknown date") and is its only holder since."
                )
                v.paidBy = expected.accounts.sorted().first
                v.lookAlike = "subscription-moved"
                v.details =
                    notes + [
                        expected.why,
                        "\(receiver) submitted \(restore.sourceRef) (transaction \(restore.transactionID)) before credit \(credit.creditID); no other account was credited the subscription after it.",
                    ]
                return v
            }
            // A non-consumable or subscription restored into a new account after the payer's own credit of it was
            // reversed (an account deleted, signed up again with the same Apple Account): one account at a time
            // (as IAP-011 and IAP-012 hold).
            if let replaced = c.creditReplacedByRestore(t, to: credit, from: expected.accounts) {
                let old = replaced.userID ?? "?"
                var v = make(
                    .paidAndCredited,
                    "Paid and credited after a move: transaction \(transactionID) (\(product), \(price)) was credited to \(old), whose credit was reversed \(replaced.reversedAt.map(StorefrontTime.shortUTC) ?? "earlier"); \(receiver) was credited it on \(credit.creditedAt.map(StorefrontTime.shortUTC) ?? "an unknown date") and is its only holder since."
                )
                v.paidBy = expected.accounts.sorted().first
                v.lookAlike = "account-transfer"
                v.details =
                    notes + [
                        expected.why,
                        "Credit \(replaced.creditID) of \(old) (transaction \(replaced.transactionID ?? "?")) was reversed \(replaced.reversedAt.map(StorefrontTime.shortUTC) ?? "") (\(replaced.reversalReason ?? "no reason")) before credit \(credit.creditID) was granted to \(receiver); no other account holds the purchase (a restore into a new account, as after an account was deleted and signed up again with the same Apple Account).",
                    ]
                return v
            }
            var v = make(
                .misCredit,
                "Mis-credited: \(expected.accounts.sorted().joined(separator: ", ")) paid for transaction \(transactionID) (\(product), \(price)), but \(receiver) was credited."
            )
            v.paidBy = expected.accounts.sorted().first
            v.details = notes + [expected.why]
            // Never ask to credit an account that already holds it (the buyer of a non-consumable restored into
            // a second account keeps their own unlock).
            if let (heldID, held) = c.standingCredit(of: t, heldBy: expected.accounts) {
                let holder = held.userID ?? "?"
                v.details.append(
                    "\(holder)'s own credit \(held.creditID) (transaction \(heldID)) still stands: \(holder) has it already."
                )
                v.action =
                    "Reverse credit \(credit.creditID) of \(receiver); \(holder) keeps its own credit \(held.creditID): do not credit \(holder) again."
            } else {
                v.action = "Credit \(v.paidBy ?? "the payer") and reverse credit \(credit.creditID) of \(receiver)."
            }
            return v
        }
        // The credit matched a token the receiver held when it was made, though Apple's record names another
        // account's now (Set App Account Token after an account merge): say so.
        if !familyShared, let change = tokenChangeNote(t, credit: credit) {
            notes.append(change)
            lookAlike = lookAlike ?? "account-transfer"
        }
        if let creditedProduct = credit.productID, let appleProduct = t.productID, creditedProduct != appleProduct {
            var v = make(
                .creditedWrongItem,
                "Wrong item: Apple charged for \(appleProduct) (transaction \(transactionID)) but \(creditedProduct) was credited to \(receiver)."
            )
            v.action = "Grant \(appleProduct) and reverse credit \(credit.creditID)."
            return v
        }
        // (Rows keyed by a subscription's original transaction credit the periods Apple sold under it.)
        let periodsOfOriginal =
            perItem != nil
            && (c.subscriptionPeriodsMillis(keyedBy: t).map { LookupContext.days(credit.units ?? 0, fitIn: $0) }
                == true)
        if let expectedUnits = c.expectedUnits(t), let units = credit.units, units != expectedUnits,
            !c.creditsApplePeriod(t, units: units), !periodsOfOriginal
        {
            var v = make(
                .creditedWrongItem,
                "Wrong quantity: transaction \(transactionID) (\(product)) should grant \(expectedUnits) units, but \(units) were credited to \(receiver)."
            )
            v.action = "Adjust the credit by \(expectedUnits - units) units."
            return v
        }
        if let bundle = t.bundleID, c.apps.contains(bundle), c.catalogUnits[bundle + "|" + (t.productID ?? "")] == nil {
            var v = make(
                .creditedWrongItem,
                "Not in the catalog: transaction \(transactionID) bought \(product), which is not a product of \(bundle); it was credited to \(receiver)."
            )
            v.details = notes + ["IAP-006 flags purchases of products outside the app's catalog (retired or unknown)."]
            v.action =
                "Check what \(product) should grant; reverse credit \(credit.creditID) if it is not sold any more."
            return v
        }
        if !familyShared, let shared = c.sharedToken(of: t), shared.holders.contains(receiver) {
            let others = shared.holders.filter { $0 != receiver }
            if shared.owner != receiver {
                var v = make(.tokenShared, "")
                v = tokenSharedVerdict(v, t, shared: shared, receiver: receiver, product: product, price: price)
                v.details = notes + v.details
                return v
            }
            notes.append(
                "Its app account token is also on orders of \(Self.names(others)); \(receiver) used it first (IAP-013 reports the others)."
            )
        }
        var v = make(
            .paidAndCredited,
            "Paid and credited: transaction \(transactionID) (\(product), \(price)) was credited to \(receiver) on \(credit.creditedAt.map(StorefrontTime.shortUTC) ?? "an unknown date")."
        )
        if lookAlike == nil {
            let subscription = (t.productType ?? "").contains("Subscription")
            let later = t.originalTransactionID != nil && t.originalTransactionID != transactionID
            if credits.contains(where: { $0.reversalReason == "rollback" }) {
                lookAlike = "rolled-back-retry"
                notes.append("A duplicate credit from a retry was rolled back.")
            } else if let replaced = c.upgradeReplaced(by: t) {
                lookAlike = "subscription-upgrade"
                notes.append(upgradeNote(t, replaced: replaced))
            } else if t.transactionReason == "PURCHASE", later, subscription {
                // Apple says the customer bought it (a change of plan, a resubscription): not a renewal.
                notes.append(
                    "A new purchase in the subscription of original transaction \(t.originalTransactionID ?? "?") (Apple's transaction reason PURCHASE: a change of plan or a resubscription), not a renewal."
                )
            } else if t.transactionReason == "RENEWAL" || (later && subscription) {
                lookAlike = "subscription-renewal"
                notes.append(
                    "A renewal of original transaction \(t.originalTransactionID ?? "?"): a new period, not a second charge."
                )
            } else if c.originalPurchase(of: t) != nil {
                lookAlike = "restore"
                notes.append(
                    "A restore of original transaction \(t.originalTransactionID ?? "?") by the same account: no new charge."
                )
            }
        }
        if familyShared {
            // The organiser's own purchase, when the store links it; the member who got the copy did not pay.
            let organiser = c.organiserPurchase(of: t).flatMap { c.payer(of: $0.transactionID)?.user }
            v.paidBy = organiser
            notes.append(
                "Family sharing: \(organiser.map { "bought by \($0), " } ?? "")shared with \(receiver) by Apple; not a mis-credit."
            )
        }
        v.lookAlike = lookAlike
        v.details = notes
        return v
    }

    /// A purchase credited to the account that ordered it, whose app account token other accounts' orders carry
    /// too and no account record names (IAP-013): the token cannot say who paid, so the ordering account (and
    /// the Apple Account that paid, when Apple names it) is the payer and nothing is moved.
    func tokenSharedVerdict(
        _ verdict: ClaimVerdict, _ t: LookupEvidence.Transaction,
        shared: (token: String, owner: String, holders: [String]),
        receiver: String, product: String, price: String
    ) -> ClaimVerdict {
        var v = verdict
        let payer = v.paidBy ?? receiver
        v.paidBy = payer
        let notPaying = shared.holders.filter { $0 != payer && $0 != receiver }
        let others = notPaying.isEmpty ? shared.holders.filter { $0 != receiver } : notPaying
        let credited = payer == receiver ? "was credited" : "\(receiver) was credited"
        v.headline =
            "Shared app account token: \(payer) paid for transaction \(t.transactionID) (\(product), \(price)) and \(credited), but its app account token is also on orders of \(Self.names(others)), so the token cannot tell who paid; not a mis-credit."
        let orderUsers = Set(context.orders(t.transactionID).compactMap(\.userID)).sorted()
        if !orderUsers.isEmpty {
            v.details.append("The order(s) for it belong to \(orderUsers.joined(separator: ", ")).")
        }
        if let account = t.appTransactionID {
            let alsoPaidFor = (context.tokenUse.appleAccounts[shared.token]?[account] ?? []).subtracting([payer])
            v.details.append(
                alsoPaidFor.isEmpty
                    ? "Apple Account \(account) paid for it, and for no other account's order with this token."
                    : "Apple Account \(account) paid for it and for orders of \(Self.names(alsoPaidFor.sorted())) with this token: the accounts may be one person's."
            )
        } else {
            v.details.append("Apple names no Apple Account for it; the order says who paid.")
        }
        v.details.append(
            "No account record names app account token \(shared.token); orders of \(shared.holders.count) accounts carry it, \(shared.owner) first. IAP-013 reports each account after the first (see its finding)."
        )
        v.action =
            "Nothing to move: the account that ordered it got it. Work the IAP-013 finding: check whether \(Self.names(shared.holders)) are one farm, or the app gives several accounts one token (each account needs its own)."
        return v
    }

    /// `a, b, c` for up to five accounts, then `and N more`.
    static func names(_ accounts: [String]) -> String {
        guard accounts.count > 5 else { return accounts.joined(separator: ", ") }
        return accounts.prefix(5).joined(separator: ", ") + " and \(accounts.count - 5) more"
    }

    /// A Sandbox verdict: allow-listed testers are the look-alike, anyone else credited must be reversed (IAP-017).
    func sandboxVerdict(_ verdict: ClaimVerdict, receivers: [String]) -> ClaimVerdict {
        var v = verdict
        let outsiders = receivers.filter { !context.testers.contains($0) }
        if !receivers.isEmpty && outsiders.isEmpty { v.lookAlike = "tester-sandbox" }
        if !outsiders.isEmpty {
            v.details.append("\(outsiders.joined(separator: ", ")) is not on the tester allow-list (IAP-017).")
            v.action = "Reverse the credit for \(outsiders.joined(separator: ", ")): sandbox purchases are free."
        }
        return v
    }

    /// A verdict for an order that carries no transaction id: the verdict of the transaction Apple reported that
    /// a credit of the order names (the backend credited it from Apple's notification and never wrote the
    /// transaction onto the order), else the order's own.
    func verdict(forOrder order: LookupEvidence.Order) -> ClaimVerdict {
        let credits = context.evidence.credits.filter { $0.orderID == order.orderID }
        let standing = credits.filter { $0.stands(at: context.now) }
        let named = (standing + credits).first { $0.transactionID.map { context.transactionsByID[$0] != nil } == true }
        if let credit = named, let transactionID = credit.transactionID, var v = verdict(for: transactionID) {
            if !v.orderIDs.contains(order.orderID) { v.orderIDs.append(order.orderID) }
            v.details.append(
                "Order \(order.orderID) (status \(order.status ?? "?")) names no transaction; its credit \(credit.creditID) names transaction \(transactionID), which Apple reported: the order is judged by it."
            )
            return v
        }
        if !standing.isEmpty {
            let receivers = Array(Set(standing.compactMap(\.userID))).sorted()
            let unpaid = context.unpaidOrderStatuses.contains(orderStatus: order.status)
            var v = ClaimVerdict(
                code: .unverifiable,
                headline: unpaid
                    ? "Credited without payment: order \(order.orderID) is marked \(order.status ?? "?") by the backend and no Apple transaction is behind it, yet it was credited to \(receivers.joined(separator: ", "))."
                    : "Unconfirmed: order \(order.orderID) was credited to \(receivers.joined(separator: ", ")) without any Apple transaction.",
                transactionID: nil)
            v.orderIDs = [order.orderID]
            v.paidBy = order.userID
            v.creditedTo = receivers
            v.details.append(
                "Credit(s) \(standing.map(\.creditID).sorted().joined(separator: ", ")) name no transaction, and no copy Apple sent came in with the order."
            )
            v.action =
                unpaid
                ? "Reverse the credit for \(receivers.joined(separator: ", ")): the order was never paid (IAP-022)."
                : "Do not grant more; check whether the data was pulled, else reverse the credit."
            return v
        }
        var v = ClaimVerdict(
            code: .orderNotPaid,
            headline:
                "No payment known: order \(order.orderID) (\(order.productID ?? "?"), status \(order.status ?? "?")) has no Apple transaction and nothing was credited.",
            transactionID: nil)
        v.orderIDs = [order.orderID]
        v.paidBy = order.userID
        v.details.append(
            "The customer was most likely not charged; if they show an Apple receipt, look up its transaction ID.")
        return v
    }

    /// The accounts that should have received `credit` of a transaction and why, when its account is not among
    /// them (`nil` when the receiver is right or nothing says who should be).
    func expectedReceivers(_ t: LookupEvidence.Transaction, credit: LookupEvidence.Credit) -> (
        accounts: Set<String>, why: String
    )? {
        let c = context
        let receiver = credit.userID ?? "?"
        var checks: [(Set<String>, String)] = []
        if t.productType == "Non-Consumable", let original = c.originalPurchase(of: t),
            let payer = c.payer(of: original.transactionID)
        {
            checks.append(
                (
                    [payer.user],
                    "\(payer.user) bought original transaction \(original.transactionID) (\(payer.how)); this is a restore of it."
                ))
        } else {
            let orderUsers = Set(c.orders(t.transactionID).compactMap(\.userID))
            if !orderUsers.isEmpty {
                checks.append(
                    (orderUsers, "The order(s) for it belong to \(orderUsers.sorted().joined(separator: ", "))."))
            }
            // A token no account record names is the token of every account whose orders carry it (as IAP-012
            // holds): the credited account's own orders with it make it no one else's, even when other accounts
            // share it (IAP-013's to report; see `tokenSharedVerdict`). A token the receiver owned on a copy
            // received by the credit makes the credit its own, whatever token Apple's later copies carry.
            // A token the accounts source gives several accounts names the holder that ordered or submitted the
            // purchase (as IAP-012 holds): a client that sets one token per device.
            if c.copyOwnedAtCredit(t, credit: credit) == nil, let token = t.appAccountToken?.lowercased(),
                let owners = c.tokenOwners[token], !owners.isEmpty,
                c.tokenUse.known.contains(token) || c.tokenUse.holders[token]?.contains(receiver) != true
            {
                if let holder = c.holderOfSharedToken(t, owners: owners) {
                    checks.append(
                        (
                            [holder],
                            "Its app account token is held by \(owners.sorted().joined(separator: ", ")); \(holder) ordered or submitted the purchase."
                        ))
                } else {
                    checks.append(
                        (owners, "Its app account token belongs to \(owners.sorted().joined(separator: ", "))."))
                }
            }
            // A renewal Apple gave the receiver's token (not the buyer's) is the receiver's subscription now.
            if orderUsers.isEmpty, let original = c.originalPurchase(of: t),
                let payer = c.payer(of: original.transactionID),
                tokenMoved(t, from: payer.user, to: credit) == nil
            {
                checks.append(([payer.user], "\(payer.user) bought original transaction \(original.transactionID)."))
            }
        }
        return checks.first { !$0.0.contains(receiver) }.map { (accounts: $0.0, why: $0.1) }
    }

    /// Whether `id` is written as Apple writes transaction ids: decimal digits only.
    static func isAppleID(_ id: String) -> Bool {
        !id.isEmpty && id.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    }

    /// Forgery markers on a transaction id or its copies.
    func forgeryMarkers(_ transactionID: String, sightings: [LookupEvidence.Sighting]) -> [String] {
        var markers = Set<String>()
        if transactionID.lowercased().hasPrefix("com.urus.iap") { markers.insert("urus-marker") }
        // A copy from Apple or the app with an id that is not Apple's digits is a forger's; a credit's id that no
        // copy ever carried is only the backend's claim: unconfirmed, as IAP-020 holds (a web or other store's
        // payment id in a shared ledger looks the same).
        if !sightings.isEmpty, !Self.isAppleID(transactionID) { markers.insert("non-numeric-id") }
        for sighting in sightings {
            for anomaly in (sighting.anomalies ?? "").split(separator: ",").map(String.init)
            where Self.forgeryAnomalies.contains(anomaly) {
                // As IAP-007 holds: a forger's mark only where the app names its products under the bundle id
                // and this product is not in its catalog (Apple lets an app name products freely).
                if anomaly == "product-outside-bundle",
                    !context.isForeignToCatalog(bundleID: sighting.bundleID, productID: sighting.productID)
                {
                    continue
                }
                markers.insert(anomaly)
            }
        }
        return markers.sorted()
    }

    /// The units a refund of `refundedMilli` (milli-percent) leaves the customer of `granted`, as IAP-015 counts
    /// them: rounded up to a whole unit when more than one was granted (15 of 30 days for a 50.5 % refund), down
    /// for a single unit (one item refunded in part is still refunded).
    static func keptShare(of granted: Int64, refundedMilli: Int64) -> Int64 {
        let kept = granted * (100_000 - refundedMilli)
        return granted > 1 ? (kept + 99_999) / 100_000 : kept / 100_000
    }

    /// The refund share from any refund event or the transaction, milli-percent.
    private func refundShare(_ transactionID: String) -> Int64? {
        (context.refundsByTransaction[transactionID] ?? []).compactMap(\.revocationPercentage).max()
            ?? context.transactionsByID[transactionID]?.revocationPercentage
    }

    /// `0.99 USD`, or `price unknown`.
    static func money(_ milli: Int64?, _ currency: String?) -> String {
        guard let milli else { return "price unknown" }
        return Money.decimalText(milliunits: milli) + (currency.map { " " + $0 } ?? "")
    }

    /// `50 %` from milli-percent.
    static func percent(_ milli: Int64) -> String {
        milli % 1000 == 0 ? "\(milli / 1000) %" : Money.decimalText(milliunits: milli) + " %"
    }
}
