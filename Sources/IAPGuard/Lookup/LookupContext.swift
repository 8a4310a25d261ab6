/// The evidence of a lookup indexed for judging: rows by transaction, order and original id, plus the
/// reference data (catalog units, testers, token owners) and the judging time.
struct LookupContext {
    let evidence: LookupEvidence
    let now: Int64
    /// Grace before a paid purchase counts as missing, ms.
    let graceMillis: Int64
    let catalogUnits: [String: Int64]
    /// Bundle ids of the configured apps.
    let apps: Set<String>
    let testers: Set<String>
    /// Lower-cased token → owners (users whose orders carry it).
    let tokenOwners: [String: Set<String>]
    /// How the backend credits each app's subscription renewals (for the apps of the transactions judged).
    var renewalCrediting: [String: RenewalCrediting] = [:]
    /// IAP-014's `renewal_credit_share`: below this share of credited renewals, renewals are not owed a credit.
    var renewalCreditShare: Double = 0.2
    /// IAP-014's `clock_skew_minutes`, in milliseconds: a subscription credit reversed this long before Apple's
    /// expiry of its period counts as reversed at the expiry.
    var clockSkewMillis: Int64 = 15 * 60_000
    /// IAP-022's `unpaid_statuses`: order statuses (trimmed, lower case) that say the order was never paid.
    var unpaidOrderStatuses = UnpaidOrderStatuses.ruleDefault
    /// Who else uses the tokens of the transactions judged (a token shared by several accounts).
    var tokenUse = TokenUse()

    /// Who uses each app account token of a lookup, beside its owner (``tokenOwners``).
    struct TokenUse {
        /// Lower-cased tokens the accounts source (`users`) names: their owner is certain.
        var known: Set<String> = []
        /// Lower-cased token → every account whose orders carry it.
        var holders: [String: Set<String>] = [:]
        /// Lower-cased token → Apple Account (`appTransactionId`) → the accounts whose orders with the token that
        /// Apple Account paid for.
        var appleAccounts: [String: [String: Set<String>]] = [:]
    }

    let transactionsByID: [String: LookupEvidence.Transaction]
    let sightingsByTransaction: [String: [LookupEvidence.Sighting]]
    let ordersByTransaction: [String: [LookupEvidence.Order]]
    let ordersByID: [String: LookupEvidence.Order]
    let creditsByTransaction: [String: [LookupEvidence.Credit]]
    let refundsByTransaction: [String: [LookupEvidence.RefundEvent]]
    let familyByOriginal: [String: [LookupEvidence.Transaction]]

    init(
        evidence: LookupEvidence, now: Int64, graceMillis: Int64, catalogUnits: [String: Int64], apps: Set<String>,
        testers: Set<String>, tokenOwners: [String: Set<String>]
    ) {
        self.evidence = evidence
        self.now = now
        self.graceMillis = graceMillis
        self.catalogUnits = catalogUnits
        self.apps = apps
        self.testers = testers
        self.tokenOwners = tokenOwners
        transactionsByID = Dictionary(
            evidence.transactions.map { ($0.transactionID, $0) }, uniquingKeysWith: { a, _ in a })
        sightingsByTransaction = Dictionary(grouping: evidence.sightings, by: \.transactionID)
        ordersByTransaction = Dictionary(grouping: evidence.orders.filter { $0.transactionID != nil }) {
            $0.transactionID ?? ""
        }
        ordersByID = Dictionary(evidence.orders.map { ($0.orderID, $0) }, uniquingKeysWith: { a, _ in a })
        // A credit counts for a transaction by its own transaction_id, or through its order's transaction.
        var credits: [String: [LookupEvidence.Credit]] = [:]
        let orderTransactions = Dictionary(
            evidence.orders.compactMap { o in o.transactionID.map { (o.orderID, $0) } }, uniquingKeysWith: { a, _ in a }
        )
        for credit in evidence.credits {
            if let tx = credit.transactionID ?? credit.orderID.flatMap({ orderTransactions[$0] }) {
                credits[tx, default: []].append(credit)
            }
        }
        creditsByTransaction = credits
        refundsByTransaction = Dictionary(grouping: evidence.refunds.filter { $0.transactionID != nil }) {
            $0.transactionID ?? ""
        }
        familyByOriginal = Dictionary(grouping: evidence.transactions.filter { $0.originalTransactionID != nil }) {
            $0.originalTransactionID ?? ""
        }
    }

    func credits(_ transactionID: String) -> [LookupEvidence.Credit] { creditsByTransaction[transactionID] ?? [] }
    func orders(_ transactionID: String) -> [LookupEvidence.Order] { ordersByTransaction[transactionID] ?? [] }
    func sightings(_ transactionID: String) -> [LookupEvidence.Sighting] { sightingsByTransaction[transactionID] ?? [] }

    /// Clawback ledger rows (negative units) by the transaction they take back (or their order's).
    var clawbacksByTransaction: [String: [LookupEvidence.Credit]] = [:]

    /// Files `rows` (clawback ledger rows) under their transaction, or their order's.
    mutating func noteClawbacks(_ rows: [LookupEvidence.Credit]) {
        var byTransaction: [String: [LookupEvidence.Credit]] = [:]
        for row in rows {
            let order = row.orderID.flatMap { ordersByID[$0]?.transactionID }
            if let tx = row.transactionID ?? order { byTransaction[tx, default: []].append(row) }
        }
        clawbacksByTransaction = byTransaction
    }

    /// Units that clawback ledger rows took back of `standing` (the transaction's standing credits), as
    /// IAP-015 counts them: per account, what its rows took back, at most its credits granted until its latest
    /// row (a clawback the store applied reversed those already; a grant made after it is not offset).
    func clawedBackUnits(_ transactionID: String, standing: [LookupEvidence.Credit]) -> Int64 {
        let rows = (clawbacksByTransaction[transactionID] ?? []).filter { ($0.creditedAt ?? .max) <= now }
        var total: Int64 = 0
        for (user, own) in Dictionary(grouping: rows, by: { $0.userID ?? "" }) {
            let negative = own.reduce(Int64(0)) { Money.saturatingSum($0, min($1.units ?? 0, 0)) }
            let taken = negative == .min ? .max : -negative
            let latest = own.compactMap(\.creditedAt).max() ?? 0
            let before = standing.filter { ($0.userID ?? "") == user && ($0.creditedAt ?? .max) <= latest }
                .reduce(Int64(0)) { Money.saturatingSum($0, $1.units ?? 0) }
            total = Money.saturatingSum(total, max(0, min(taken, before)))
        }
        return total
    }

    /// Whether `days` (a credit's units) fit in `millis` with half a day's slack. In floating point: the units
    /// are the backend's and the quantity Apple's (or a forger's), and no count may trap the lookup.
    static func days(_ days: Int64, fitIn millis: Int64) -> Bool {
        Double(days) * 86_400_000 <= Double(millis) + 43_200_000
    }

    /// Units one purchase of `product` in `bundle` grants, times Apple's quantity.
    func expectedUnits(_ t: LookupEvidence.Transaction) -> Int64? {
        guard let bundle = t.bundleID, let product = t.productID, let units = catalogUnits[bundle + "|" + product]
        else { return nil }
        let (granted, overflow) = units.multipliedReportingOverflow(by: max(t.quantity ?? 1, 1))
        return overflow ? nil : granted
    }

    /// The account that paid for a transaction and how that is known.
    func payer(of transactionID: String) -> (user: String, how: String)? {
        if let order = orders(transactionID).first(where: { $0.userID != nil }), let user = order.userID {
            return (user, "created order \(order.orderID)")
        }
        // A shared token's first user did not pay for the other accounts' purchases.
        if let t = transactionsByID[transactionID], sharedToken(of: t) == nil,
            let token = t.appAccountToken?.lowercased(), let owners = tokenOwners[token],
            let owner = holderOfSharedToken(t, owners: owners) ?? owners.sorted().first
        {
            return (
                owner,
                owners.count >= 2
                    ? "holds the app account token and submitted the purchase" : "owns the app account token"
            )
        }
        if let sighting = sightings(transactionID).first(where: { $0.submittedByUserID != nil }),
            let user = sighting.submittedByUserID
        {
            return (user, "submitted the receipt")
        }
        return nil
    }

    /// Of a token the accounts source gives several accounts (a client that sets one token per device), the
    /// holder that ordered the purchase (its earliest order), else the one that submitted it first, as IAP-012
    /// holds; `nil` when the token has one owner or no holder did either.
    func holderOfSharedToken(_ t: LookupEvidence.Transaction, owners: Set<String>) -> String? {
        guard owners.count >= 2 else { return nil }
        let ordered = orders(t.transactionID).sorted { ($0.createdAt ?? .max) < ($1.createdAt ?? .max) }
        if let user = ordered.compactMap(\.userID).first(where: owners.contains) { return user }
        let copies = sightings(t.transactionID).sorted { ($0.receivedAt ?? .max) < ($1.receivedAt ?? .max) }
        return copies.compactMap(\.submittedByUserID).first(where: owners.contains)
    }

    /// A transaction's app account token when several accounts share it: no account record names it and the
    /// orders of several accounts carry it (IAP-013's token farm, or an app that gives several accounts one
    /// token). `owner` is its first user (the account of its earliest order, as IAP-013 takes it); `holders`
    /// every account whose orders carry it. `nil` for a token with one user or an owner the accounts source names.
    func sharedToken(of t: LookupEvidence.Transaction) -> (token: String, owner: String, holders: [String])? {
        guard let token = t.appAccountToken?.lowercased(), !tokenUse.known.contains(token),
            let holders = tokenUse.holders[token], holders.count >= 2, let owner = tokenOwners[token]?.sorted().first
        else { return nil }
        return (token, owner, holders.sorted())
    }

    /// Whether the same payer paid for two transactions: the same Apple Account (`appTransactionId`) when both
    /// name one, else the same paying account (``payer(of:)``: the ordering account first). Symmetric, so a
    /// pair reads the same whichever of its transactions is looked up; `false` when either payer is unknown.
    func samePayer(_ a: String, _ b: String) -> Bool {
        if let x = transactionsByID[a]?.appTransactionID, let y = transactionsByID[b]?.appTransactionID {
            return x == y
        }
        guard let p = payer(of: a)?.user, let q = payer(of: b)?.user else { return false }
        return p == q
    }

    /// Whether `productID` lies outside the product namespace `bundleID`'s catalog uses: the catalog names at
    /// least one product under the bundle id and does not hold this one (IAP-007's `product-outside-bundle`).
    func isForeignToCatalog(bundleID: String?, productID: String?) -> Bool {
        guard let bundleID, let productID else { return false }
        let prefix = bundleID + "|"
        if catalogUnits[prefix + productID] != nil { return false }
        return catalogUnits.keys.contains { $0.hasPrefix(prefix + bundleID + ".") }
    }

    /// The one credit that several standing rows of one account make up (as IAP-001 and IAP-019 hold): a
    /// multi-quantity purchase credited one row per item (no more rows than items, adding up to no more than
    /// the catalog's units × quantity), or a subscription's days credited in parts (the period, then the days of
    /// a renewal date extension or of the Billing Grace Period Apple granted after it) adding up to no more than
    /// Apple's period and that grace period (``entitledPeriodMillis(_:)``), or a non-consumable granted to the
    /// same account more than once (it unlocks once: a StoreKit 2 restore on a new device written as another
    /// unlock row). `nil` otherwise.
    func creditOfItemRows(_ t: LookupEvidence.Transaction, standing: [LookupEvidence.Credit]) -> LookupEvidence.Credit?
    {
        guard standing.count >= 2, let first = standing.first, Set(standing.map(\.userID)).count == 1 else {
            return nil
        }
        if t.productType == "Non-Consumable" { return first }
        let units = standing.compactMap(\.units)
        guard units.count == standing.count else { return nil }
        let total = units.reduce(0, Money.saturatingSum)
        let perItem =
            (t.quantity ?? 1) > 1 && standing.count <= (t.quantity ?? 1) && expectedUnits(t).map { total <= $0 } == true
        let periodParts = entitledPeriodMillis(t).map { Self.days(total, fitIn: $0) } == true
        let periodsOfOriginal =
            subscriptionPeriodsMillis(keyedBy: t).map { Self.days(total, fitIn: $0) } == true
        guard perItem || periodParts || periodsOfOriginal else { return nil }
        var merged = first
        merged.units = total
        return merged
    }

    /// The days, in ms, of every period Apple sold under subscription original transaction `t` (each of its
    /// transactions' expiry minus purchase), when the backend keys the subscription by its original transaction:
    /// `t` is the original, Apple renewed it at least once, and no renewal has a standing credit of its own (as
    /// IAP-001 holds). The original's rows then credit the periods, one each. `nil` otherwise.
    func subscriptionPeriodsMillis(keyedBy t: LookupEvidence.Transaction) -> Int64? {
        guard t.productType == "Auto-Renewable Subscription", t.originalTransactionID == t.transactionID else {
            return nil
        }
        let periods = (familyByOriginal[t.transactionID] ?? []).filter {
            $0.expiresDate != nil && $0.purchaseDate != nil
        }
        guard periods.count >= 2, periods.contains(where: { $0.transactionID == t.transactionID }) else { return nil }
        let renewalsCredited = periods.contains { renewal in
            renewal.transactionID != t.transactionID && credits(renewal.transactionID).contains { $0.stands(at: now) }
        }
        guard !renewalsCredited else { return nil }
        return periods.reduce(Int64(0)) { $0 + (($1.expiresDate ?? 0) - ($1.purchaseDate ?? 0)) }
    }

    /// The standing credits naming renewal `t`'s original transaction when they add up to the periods Apple
    /// sold under that original up to and including `t` (each period's expiry minus purchase, 12 h of slack a
    /// period): a backend that keys the subscription by its original transaction credited this renewal there
    /// (as IAP-014 holds). `nil` when `t` is no renewal or the rows fall short.
    func creditsThroughOriginal(of t: LookupEvidence.Transaction) -> [LookupEvidence.Credit]? {
        guard t.productType == "Auto-Renewable Subscription", let original = t.originalTransactionID,
            original != t.transactionID, let bought = t.purchaseDate
        else { return nil }
        let standing = credits(original).filter { $0.stands(at: now) }
        let periods = (familyByOriginal[original] ?? []).filter {
            $0.expiresDate != nil && ($0.purchaseDate ?? .max) <= bought && $0.inAppOwnershipType != "FAMILY_SHARED"
        }
        guard !standing.isEmpty, !periods.isEmpty else { return nil }
        let sold = periods.reduce(Int64(0)) { $0 + (($1.expiresDate ?? 0) - ($1.purchaseDate ?? 0)) }
        let days = standing.reduce(Int64(0)) { Money.saturatingSum($0, $1.units ?? 0) }
        return Double(days) * 86_400_000 >= Double(sold) - 43_200_000 * Double(periods.count) ? standing : nil
    }

    /// Expiry minus purchase of a subscription transaction (the period Apple sold, moved by a renewal date
    /// extension), `nil` for anything else.
    func applePeriodMillis(_ t: LookupEvidence.Transaction) -> Int64? {
        guard t.productType == "Auto-Renewable Subscription", let expires = t.expiresDate, let purchase = t.purchaseDate
        else { return nil }
        return expires - purchase
    }

    /// The end of the Billing Grace Period Apple granted after subscription period `t` when the renewal that
    /// should have followed it failed (IAP-001 and IAP-019 hold the same): the latest `gracePeriodExpiresDate` a
    /// verified notification of `t`'s original transaction reports after `t`'s expiry, when no other period of
    /// the subscription ended between the two (the grace period started when `t` ended: it was the last period
    /// paid). `nil` when Apple reported none for it.
    func gracePeriodExpiresDate(after t: LookupEvidence.Transaction) -> Int64? {
        guard let original = t.originalTransactionID, let expires = t.expiresDate else { return nil }
        let periods = familyByOriginal[original] ?? []
        return evidence.notifications.compactMap { n -> Int64? in
            guard n.verification == "verified", n.originalTransactionID == original,
                let grace = n.gracePeriodExpiresDate, grace > expires,
                !periods.contains(where: { ($0.expiresDate.map { $0 > expires && $0 < grace }) == true })
            else { return nil }
            return grace
        }.max()
    }

    /// The days a backend may credit for a subscription transaction, in ms: Apple's period
    /// (``applePeriodMillis(_:)``), up to the end of the Billing Grace Period Apple granted after it
    /// (``gracePeriodExpiresDate(after:)``). `nil` for anything but a subscription.
    func entitledPeriodMillis(_ t: LookupEvidence.Transaction) -> Int64? {
        guard let period = applePeriodMillis(t) else { return nil }
        guard let grace = gracePeriodExpiresDate(after: t), let purchase = t.purchaseDate else { return period }
        return grace - purchase
    }

    /// Whether `units` are days a backend rightly credits for a subscription transaction (IAP-019 holds the
    /// same): the days of the period Apple sold (within half a day: a free-trial week, a 31-day month), or any
    /// number from the catalog's units up to that period when Apple extended it, or up to the end of the
    /// Billing Grace Period Apple granted after it (``entitledPeriodMillis(_:)``).
    func creditsApplePeriod(_ t: LookupEvidence.Transaction, units: Int64) -> Bool {
        guard let period = applePeriodMillis(t), let entitled = entitledPeriodMillis(t) else { return false }
        if abs(Double(units) * 86_400_000 - Double(period)) <= 43_200_000 { return true }
        guard let expected = expectedUnits(t) else { return false }
        return Double(units) * 86_400_000 >= Double(expected) * 86_400_000 - 43_200_000
            && Self.days(units, fitIn: entitled)
    }

    /// The ids of `standing` rows that grant a backend item beside the purchase (a promotion's bonus): a product
    /// that differs from Apple's and that no configured app sells, credited to an account that also holds a row of
    /// Apple's product (or of no product) for the transaction (IAP-001 and IAP-018 hold the same). Empty when
    /// Apple's product is unknown.
    ///
    /// Also a row naming no product that grants less than the purchase, credited to an account whose row of
    /// Apple's product grants exactly the catalog's units (a bonus written without an item; IAP-001 and IAP-019
    /// hold the same), except for subscriptions, whose rows are days.
    ///
    /// Only the one row of its item (or the one without an item) for an account is a bonus: two standing rows of
    /// the same bonus item are the bonus replayed, and both count as credits (IAP-001 2.8).
    func bonusRows(of t: LookupEvidence.Transaction?, among standing: [LookupEvidence.Credit]) -> Set<String> {
        guard let t, let appleProduct = t.productID else { return [] }
        let ownRowHolders = Set(
            standing.filter { $0.productID == nil || $0.productID == appleProduct }.compactMap(\.userID))
        let expected = t.productType == "Auto-Renewable Subscription" ? nil : expectedUnits(t)
        let exactRowHolders = Set(
            standing.filter { $0.productID == appleProduct && $0.units != nil && $0.units == expected }
                .compactMap(\.userID))
        var rowsOfItem: [String: Int] = [:]
        for credit in standing {
            rowsOfItem[(credit.userID ?? "") + "\u{1F}" + (credit.productID ?? ""), default: 0] += 1
        }
        return Set(
            standing.filter { credit in
                guard let user = credit.userID,
                    rowsOfItem[user + "\u{1F}" + (credit.productID ?? ""), default: 0] == 1
                else { return false }
                guard let product = credit.productID else {
                    // A bonus without an item: less than the purchase, beside the exact row.
                    guard let expected, let units = credit.units else { return false }
                    return units < expected && exactRowHolders.contains(user)
                }
                guard product != appleProduct, ownRowHolders.contains(user) else { return false }
                return !catalogUnits.keys.contains { $0.hasSuffix("|" + product) }
            }.map(\.creditID))
    }

    /// A credit and a reversal closer than this are a transfer (IAP-011's and IAP-012's `transfer_minutes`).
    static let transferMillis: Int64 = 3_600_000

    /// The credit of one of `payers` that `credit` replaced: reversed (by `now`) within ``transferMillis`` of
    /// `credit` being granted, for an account merge or a support transfer. `nil` when the payer was never
    /// credited, or lost the credit at another time.
    func transferredCredit(
        to credit: LookupEvidence.Credit, from payers: Set<String>, among credits: [LookupEvidence.Credit]
    ) -> LookupEvidence.Credit? {
        guard let granted = credit.creditedAt else { return nil }
        return credits.first { other in
            guard other.creditID != credit.creditID, let user = other.userID, payers.contains(user),
                let reversed = other.reversedAt, reversed <= now
            else { return false }
            return abs(reversed - granted) <= Self.transferMillis
        }
    }

    /// The credit of one of `payers` that a restore into `credit`'s account replaced: for what Apple re-delivers
    /// (a non-consumable or an auto-renewable subscription: a restore, current entitlements), a payer's credit of
    /// the purchase (this transaction or another of its original) reversed by `now` and no later than
    /// ``transferMillis`` after `credit` was granted, while no other account's credit of the purchase stood when
    /// `credit` was granted or stands now (IAP-011 and IAP-012 hold the same): an account deleted and signed up
    /// again with the same Apple Account. One account at a time. `nil` otherwise.
    func creditReplacedByRestore(
        _ t: LookupEvidence.Transaction, to credit: LookupEvidence.Credit, from payers: Set<String>
    ) -> LookupEvidence.Credit? {
        guard t.productType == "Non-Consumable" || t.productType == "Auto-Renewable Subscription",
            let receiver = credit.userID, let granted = credit.creditedAt
        else { return nil }
        let original = t.originalTransactionID ?? t.transactionID
        let family = Set([t.transactionID, original] + (familyByOriginal[original] ?? []).map(\.transactionID))
        let others = family.sorted().flatMap { credits($0) }.filter { $0.userID != nil && $0.userID != receiver }
        let heldMeanwhile = others.contains { other in
            other.stands(at: now)
                || ((other.creditedAt ?? 0) <= granted && (other.reversedAt ?? .max) > granted + Self.transferMillis)
        }
        guard !heldMeanwhile else { return nil }
        return others.first { other in
            guard let user = other.userID, payers.contains(user), let reversed = other.reversedAt else { return false }
            return reversed <= now && reversed <= granted + Self.transferMillis
        }
    }

    /// A subscription that moved to `credit`'s account, and the record that shows the account restored it: the
    /// account submitted a receipt or transaction of the subscription before this credit, one of `payers` was
    /// credited the subscription before it, no other account after it, and no third account ever (IAP-012 and
    /// IAP-013 hold the same). One holder at a time for what Apple was paid.
    func restoreOfMovedSubscription(
        _ t: LookupEvidence.Transaction, to credit: LookupEvidence.Credit, from payers: Set<String>
    ) -> LookupEvidence.Sighting? {
        guard t.productType == "Auto-Renewable Subscription", let original = t.originalTransactionID,
            let receiver = credit.userID, let granted = credit.creditedAt
        else { return nil }
        let family = Set([original] + (familyByOriginal[original] ?? []).map(\.transactionID)).sorted()
        let familyCredits = family.flatMap { credits($0) }
        let standing = familyCredits.filter { $0.stands(at: now) }
        guard Set(standing.compactMap(\.userID)).count <= 2,
            familyCredits.contains(where: { c in
                c.userID.map(payers.contains) == true && (c.creditedAt ?? .max) < granted
            }),
            !standing.contains(where: { $0.userID != receiver && ($0.creditedAt ?? 0) > granted })
        else { return nil }
        return family.lazy.flatMap { self.sightings($0) }.first {
            $0.submittedByUserID == receiver && ($0.receivedAt ?? .max) <= granted
        }
    }

    /// The first purchase of a transaction's family (same original id), when it is another transaction.
    func originalPurchase(of t: LookupEvidence.Transaction) -> LookupEvidence.Transaction? {
        guard let original = t.originalTransactionID, original != t.transactionID else { return nil }
        if let first = transactionsByID[original] { return first }
        return familyByOriginal[original]?.first { $0.inAppOwnershipType != "FAMILY_SHARED" && $0 != t }
    }

    /// The purchase a Family Sharing copy shares: its original purchase when that is the organiser's own, not
    /// itself a family copy. A member's copies carry an original id of their own, so it is often unknown.
    func organiserPurchase(of t: LookupEvidence.Transaction) -> LookupEvidence.Transaction? {
        guard let purchase = originalPurchase(of: t), purchase.inAppOwnershipType != "FAMILY_SHARED" else { return nil }
        return purchase
    }

    /// A standing credit one of `accounts` already holds for what transaction `t` grants: of `t` itself, or,
    /// for a non-consumable, of its original purchase or another copy of it (a restore unlocks the same thing).
    /// Such an account is not to be credited again.
    func standingCredit(of t: LookupEvidence.Transaction, heldBy accounts: Set<String>) -> (
        transactionID: String, credit: LookupEvidence.Credit
    )? {
        var ids = [t.transactionID]
        if t.productType == "Non-Consumable", let original = t.originalTransactionID {
            ids += [original] + (familyByOriginal[original] ?? []).map(\.transactionID)
        }
        for id in OrderedIDs(ids).values {
            let held = credits(id).first { $0.stands(at: now) && $0.userID.map(accounts.contains) == true }
            if let held { return (id, held) }
        }
        return nil
    }

    /// Whether `user` owns app account token `token` (lower-cased), as IAP-012 holds: the account the accounts
    /// source gives it, else every account whose orders carry it.
    func owns(_ user: String, token: String) -> Bool {
        if tokenUse.known.contains(token) { return tokenOwners[token]?.contains(user) == true }
        return tokenUse.holders[token]?.contains(user) == true || tokenOwners[token]?.contains(user) == true
    }

    /// A verified copy of `t` received at or before `credit` whose app account token the credited account owns:
    /// the credit was the token owner's when it was made, whatever token Apple's later copies carry (the
    /// developer may set another with Set App Account Token, as after an account merge). The rule side (IAP-012)
    /// is to judge by the same principle.
    func copyOwnedAtCredit(_ t: LookupEvidence.Transaction, credit: LookupEvidence.Credit) -> LookupEvidence.Sighting? {
        guard let receiver = credit.userID, let granted = credit.creditedAt else { return nil }
        return sightings(t.transactionID).first { s in
            guard s.verification == "verified", let received = s.receivedAt, received <= granted,
                let token = s.appAccountToken?.lowercased()
            else { return false }
            // A token several accounts hold is the purchase's orderer's or submitter's (IAP-012 holds the same).
            if let owners = tokenOwners[token], let holder = holderOfSharedToken(t, owners: owners) {
                return holder == receiver
            }
            return owns(receiver, token: token)
        }
    }

    /// Apple ends the old plan's transaction and starts the new plan's at the same moment; a little slack.
    static let upgradeMillis: Int64 = 3_600_000

    /// When Apple ended subscription transaction `t` early because the customer upgraded to a higher plan of
    /// the same group (revocation type UPGRADE, not a refund), if by `now`.
    func upgradeDate(_ t: LookupEvidence.Transaction) -> Int64? {
        guard t.isUpgradeRevocation, let date = t.revocationDate, date <= now
        else { return nil }
        return date
    }

    /// The new plan's transaction that replaced upgraded transaction `t`: of the same subscription (original
    /// id), bought when Apple ended `t` (the nearest within ``upgradeMillis``).
    func upgradeReplacement(of t: LookupEvidence.Transaction) -> LookupEvidence.Transaction? {
        guard let upgraded = upgradeDate(t), let original = t.originalTransactionID else { return nil }
        return (familyByOriginal[original] ?? []).compactMap { next -> (LookupEvidence.Transaction, Int64)? in
            guard next.transactionID != t.transactionID, next.inAppOwnershipType == t.inAppOwnershipType,
                let bought = next.purchaseDate, abs(bought - upgraded) <= Self.upgradeMillis
            else { return nil }
            return (next, abs(bought - upgraded))
        }.min { $0.1 < $1.1 }?.0
    }

    /// The old plan's transaction that the purchase of subscription transaction `t` replaced in an upgrade: of
    /// the same subscription, ended by Apple as upgraded when `t` was bought (the nearest within
    /// ``upgradeMillis``). `nil` for a renewal or any other purchase.
    func upgradeReplaced(by t: LookupEvidence.Transaction) -> LookupEvidence.Transaction? {
        guard t.productType == "Auto-Renewable Subscription", let original = t.originalTransactionID,
            let bought = t.purchaseDate
        else { return nil }
        return (familyByOriginal[original] ?? []).compactMap { old -> (LookupEvidence.Transaction, Int64)? in
            guard old.transactionID != t.transactionID, old.inAppOwnershipType == t.inAppOwnershipType,
                let upgraded = upgradeDate(old), abs(bought - upgraded) <= Self.upgradeMillis
            else { return nil }
            return (old, abs(bought - upgraded))
        }.min { $0.1 < $1.1 }?.0
    }

    /// For a restored non-consumable (a new transaction id under its original): a standing credit of the
    /// original purchase or of another copy of it, the transaction it was made for first. A restore costs
    /// nothing, so such a credit is all the customer is owed (IAP-014 holds the same). For the original purchase
    /// itself, a standing credit of one of its restored copies (its own credit reversed when its account was
    /// deleted, the customer restored it into a new account): the customer holds it once.
    func creditOfRestoredPurchase(_ t: LookupEvidence.Transaction) -> (
        transactionID: String, credit: LookupEvidence.Credit
    )? {
        guard t.productType == "Non-Consumable", let original = t.originalTransactionID else { return nil }
        let family = [original] + (familyByOriginal[original] ?? []).map(\.transactionID).filter { $0 != original }
        for id in family where id != t.transactionID {
            if let credit = credits(id).first(where: { $0.stands(at: now) }) { return (id, credit) }
        }
        return nil
    }

    /// For a renewal (a later transaction of an auto-renewable subscription) of an app whose backend credits
    /// each subscription once and keeps it by its expiry: how that app's renewals are credited. Such a renewal
    /// is owed no credit of its own (IAP-014 holds the same).
    func renewalCreditedOnce(_ t: LookupEvidence.Transaction) -> RenewalCrediting? {
        guard t.productType == "Auto-Renewable Subscription", let original = t.originalTransactionID,
            original != t.transactionID, t.inAppOwnershipType != "FAMILY_SHARED", let bundle = t.bundleID,
            let policy = renewalCrediting[bundle], policy.creditsOnce(share: renewalCreditShare)
        else { return nil }
        return policy
    }

    /// The latest refund-related event at or before `now` that decides a refund's state (REFUND, REVOKE or
    /// REFUND_REVERSED; a reversal wins a tie).
    func decisiveRefund(_ transactionID: String) -> LookupEvidence.RefundEvent? {
        let events = (refundsByTransaction[transactionID] ?? []).filter {
            ["REFUND", "REVOKE", "REFUND_REVERSED"].contains($0.eventType) && ($0.eventDate ?? Int64.max) <= now
        }
        return events.max { a, b in
            if a.eventDate != b.eventDate { return (a.eventDate ?? 0) < (b.eventDate ?? 0) }
            return a.eventType != "REFUND_REVERSED" && b.eventType == "REFUND_REVERSED"
        }
    }
}
