import Foundation
import IAPGuard

/// Simulates one regular user (and the helper accounts of the pattern dealt to them), writing every
/// record straight to the sink. Holds nothing but this user's small state.
final class UserSimulator {
    enum Channel { case legacy, jws }

    /// What one purchase produced.
    struct Made {
        var tx: AppleTransaction
        var order: BackendOrder?
        var credit: Credit?
        var jws: String?
        var receiptData: String?
        var receivedAt: Int64
    }

    let p: WorldParameters
    let sink: WorldSink
    var user: UserProfile
    /// Helper accounts this user's pattern used (written to the accounts file after the user).
    var helpersUsed: [String: UserProfile] = [:]
    var rng: WorldRandom
    /// Draws only for `--sign-sample` below 1, from its own stream, so the main stream is untouched.
    private var signSampler: WorldRandom
    private var seq = 0
    private var creditSeq = 0
    /// A consumable the app has not finished yet: it rides along in the next legacy receipt.
    var unfinished: AppleTransaction?

    init(index: Int, parameters: WorldParameters, sink: WorldSink) {
        p = parameters
        self.sink = sink
        user = UserProfile.make(index: index, seed: parameters.seed)
        rng = WorldRandom(seed: parameters.seed, stream: 2, index: UInt64(index))
        signSampler = WorldRandom(seed: parameters.seed, stream: 3, index: UInt64(index))
    }

    // MARK: ids

    func nextNumber() -> Int {
        seq += 1
        return user.index * 1000 + seq
    }

    static func transactionID(_ n: Int) -> String { "2000000" + WorldTime.pad(n, 9) }

    /// The `appTransactionId` of `account`'s Apple Account (one per account; family members have their own).
    static func appTransactionID(of account: UserProfile) -> String { "7050" + WorldTime.pad(account.index, 14) }

    func nextCreditID() -> String {
        creditSeq += 1
        return "c-" + WorldTime.pad(user.index * 1000 + creditSeq, 9)
    }

    /// A base64 app receipt (PKCS#7-looking bytes, so it starts `MII` like Apple's).
    func newReceiptData() -> String {
        Data([0x30, 0x82, 0x0F, 0xA0] + rng.bytes(92)).base64EncodedString()
    }

    static func app(forBundle bundleID: String?) -> WorldCatalog.App {
        WorldCatalog.apps.first { $0.bundleID == bundleID } ?? WorldCatalog.coinsApp
    }

    // MARK: building blocks

    /// A new Apple transaction.
    func newTransaction(
        _ product: WorldCatalog.Product, storefront: WorldCatalog.Storefront, at time: Int64,
        environment: String = "Production", quantity: Int64 = 1, token: String?,
        original: AppleTransaction? = nil, reason: String = "PURCHASE", ownership: String = "PURCHASED"
    ) -> AppleTransaction {
        let n = nextNumber()
        var t = AppleTransaction(transactionID: UserSimulator.transactionID(n))
        t.originalTransactionID = original?.originalTransactionID ?? t.transactionID
        t.bundleID = product.bundleID
        t.productID = product.productID
        t.type = product.type
        t.quantity = quantity
        t.purchaseDate = time
        t.originalPurchaseDate = original?.originalPurchaseDate ?? time
        if product.isSubscription {
            t.expiresDate = time + Int64(product.periodDays) * WorldTime.day
            t.webOrderLineItemID = "1000000" + WorldTime.pad(n, 9)
        }
        t.environment = environment
        t.storefront = storefront.code
        t.currency = storefront.currency
        t.price = WorldCatalog.localPrice(product, in: storefront)
        t.appAccountToken = token
        t.inAppOwnershipType = ownership
        t.transactionReason = reason
        t.signedDate = time + rng.int64(1000...3000)
        // The simulated user's Apple Account paid; a family member's shared copy carries the member's own id
        // (set by the scenario).
        t.appTransactionID = ownership == "FAMILY_SHARED" ? nil : UserSimulator.appTransactionID(of: user)
        return t
    }

    /// The backend order a user created for `t` just before paying.
    func newOrder(
        for t: AppleTransaction, by owner: UserProfile, status: String, channel: Channel,
        userCountry: String? = nil
    ) -> BackendOrder {
        let number = Int(t.transactionID.dropFirst(7)) ?? nextNumber()
        var o = BackendOrder(orderID: "o-" + WorldTime.pad(number, 9))
        o.userID = owner.id
        o.bundleID = t.bundleID
        o.productID = t.productID
        o.quantity = t.quantity
        o.price = t.price
        o.currency = t.currency
        o.storefront = t.storefront
        o.userCountry = userCountry ?? owner.home.code
        o.createdAt = (t.purchaseDate ?? p.start) - rng.int64(5000...90000)
        o.status = status
        o.transactionID = t.transactionID
        if channel == .jws {
            o.appAccountToken = owner.token
        } else {
            o.applicationUsername = owner.applicationUsername
        }
        return o
    }

    /// A standing credit of `t`'s product to `to`.
    func newCredit(
        for t: AppleTransaction, order: BackendOrder?, to account: UserProfile, at time: Int64,
        product: WorldCatalog.Product? = nil, units: Int64? = nil
    ) -> Credit {
        var c = Credit(creditID: nextCreditID())
        c.transactionID = t.transactionID
        c.orderID = order?.orderID
        c.userID = account.id
        let catalogUnits =
            WorldCatalog.configuredProducts.first { $0.productID == t.productID }?.units
            ?? (t.productID == WorldCatalog.retiredStarter.productID ? WorldCatalog.retiredStarter.units : 1)
        c.productID = product?.productID ?? t.productID
        c.units = units ?? (product?.units ?? catalogUnits) * (t.quantity ?? 1)
        c.creditedAt = time
        return c
    }

    /// Writes a legacy submission of `entries` (status 0) wrapped with the submitter's metadata.
    func writeLegacy(
        _ entries: [WorldJSON], latest: [WorldJSON] = [], app: WorldCatalog.App, environment: String = "Production",
        submitter: String?, orderID: String?, receivedAt: Int64, receiptData: String
    ) throws {
        let response = ApplePayloadEncoder.legacyResponse(
            app: app, environment: environment, requestDate: receivedAt, entries: entries, latest: latest)
        try sink.receipt(
            userID: submitter, orderID: orderID, receivedAt: receivedAt, receiptData: receiptData, response: response)
    }

    /// Signs `t` (trusted chain unless `foreign`) and writes it as a submission.
    @discardableResult
    func writeJWS(
        _ t: AppleTransaction, submitter: String?, orderID: String?, receivedAt: Int64, foreign: Bool = false
    ) throws -> String {
        let groupID = (t.expiresDate != nil) ? WorldCatalog.subscriptionGroupID : nil
        let jws = try sink.sign(ApplePayloadEncoder.transactionPayload(t, groupID: groupID), foreign: foreign)
        try sink.signedTransaction(jws, userID: submitter, orderID: orderID, receivedAt: receivedAt)
        return jws
    }

    /// Signs and writes a notification V2 about `t`.
    func notify(
        _ type: String, subtype: String? = nil, about t: AppleTransaction, at time: Int64, autoRenew: Bool = true,
        consumptionReason: String? = nil, gracePeriodExpires: Int64? = nil
    ) throws {
        guard time < p.end else { return }
        var nested = t
        nested.signedDate = time - rng.int64(200...900)
        let groupID = (t.expiresDate != nil) ? WorldCatalog.subscriptionGroupID : nil
        let signedTx = try sink.sign(ApplePayloadEncoder.transactionPayload(nested, groupID: groupID))
        var signedRenewal: String?
        if t.expiresDate != nil {
            signedRenewal = try sink.sign(
                ApplePayloadEncoder.renewalPayload(
                    nested, autoRenew: autoRenew, signedDate: nested.signedDate ?? time,
                    gracePeriodExpires: gracePeriodExpires))
        }
        let payload = ApplePayloadEncoder.notificationPayload(
            type: type, subtype: subtype, uuid: rng.uuid(), signedDate: time,
            app: UserSimulator.app(forBundle: t.bundleID), environment: t.environment ?? "Production",
            signedTransaction: signedTx, signedRenewal: signedRenewal, consumptionReason: consumptionReason)
        try sink.notification(try sink.sign(payload))
    }

    // MARK: the purchase flow

    /// One purchase the normal way: order, payment, delivery (legacy receipt or signed transaction), credit.
    @discardableResult
    func buy(
        _ product: WorldCatalog.Product, at time: Int64, channel: Channel? = nil,
        storefront: WorldCatalog.Storefront? = nil, environment: String = "Production", buyer: UserProfile? = nil,
        credited: Bool = true, quantity: Int64 = 1, userCountry: String? = nil, noise: Bool = true,
        token: String? = nil, creditUnits: Int64? = nil, reversedAt: Int64? = nil, reversalReason: String? = nil,
        consumedAt: Int64? = nil, appleAccount: UserProfile? = nil, offer: WorldOffer? = nil
    ) throws -> Made {
        let owner = buyer ?? user
        var ch = channel ?? (owner.storeKit2 ? .jws : .legacy)
        if channel == nil, ch == .jws, p.signSample < 1, signSampler.unit() >= p.signSample {
            // Outside the signed sample (`--sign-sample`): delivered as a verifyReceipt-style record.
            ch = .legacy
        }
        let sf = storefront ?? owner.home
        var tx = newTransaction(
            product, storefront: sf, at: time, environment: environment, quantity: quantity,
            token: ch == .jws ? (token ?? owner.token) : nil)
        // The buyer's own Apple Account, unless the scenario says whose device paid.
        tx.appTransactionID = UserSimulator.appTransactionID(of: appleAccount ?? owner)
        offer?.apply(to: &tx, periodDays: product.periodDays)
        var receivedAt = time + rng.int64(2000...40000)
        var creditAt = receivedAt + rng.int64(200...3000)
        let willCredit = credited && creditAt < p.end && receivedAt < p.end
        var order = newOrder(
            for: tx, by: owner, status: willCredit ? "credited" : "paid", channel: ch, userCountry: userCountry)
        if let token, ch == .jws { order.appAccountToken = token }
        // One offer buyer in three has a paywall that logs the price the product renews at ("1 week free,
        // then 9.99"), not the offer's: not a displayed-price mismatch.
        if offer != nil, owner.index % 3 == 0 { order.price = WorldCatalog.localPrice(product, in: sf) * quantity }
        var made = Made(tx: tx, order: order, receivedAt: receivedAt)
        sink.countPurchase()
        try sink.order(order)
        guard receivedAt < p.end else { return made }
        switch ch {
        case .jws:
            made.jws = try writeJWS(tx, submitter: owner.id, orderID: order.orderID, receivedAt: receivedAt)
        case .legacy:
            let receiptData = newReceiptData()
            made.receiptData = receiptData
            if noise && rng.chance(0.02) {
                // A malformed/temporary answer first; the backend retries.
                try sink.receipt(
                    userID: owner.id, orderID: order.orderID, receivedAt: receivedAt, receiptData: receiptData,
                    response: ApplePayloadEncoder.legacyStatusOnly(21002))
                receivedAt += rng.int64(30000...300_000)
                creditAt = receivedAt + rng.int64(200...3000)
                made.receivedAt = receivedAt
            }
            var entries = [ApplePayloadEncoder.legacyEntry(tx)]
            // Only a pending purchase of the same app, made earlier, can ride along in this app's receipt.
            if noise, buyer == nil, let pending = unfinished, pending.bundleID == tx.bundleID,
                (pending.purchaseDate ?? .max) < time
            {
                let entry = ApplePayloadEncoder.legacyEntry(pending)
                if rng.chance(0.5) { entries.insert(entry, at: 0) } else { entries.append(entry) }
                unfinished = nil
            }
            let latest = product.isSubscription ? [ApplePayloadEncoder.legacyEntry(tx)] : []
            try writeLegacy(
                entries, latest: latest, app: UserSimulator.app(forBundle: tx.bundleID), environment: environment,
                submitter: owner.id, orderID: order.orderID, receivedAt: receivedAt, receiptData: receiptData)
            if noise, buyer == nil, product.isConsumable, rng.chance(0.04) { unfinished = tx }
        }
        if willCredit && creditAt < p.end {
            var credit = newCredit(for: tx, order: order, to: owner, at: creditAt, units: creditUnits)
            if let reversedAt, reversedAt < p.end {
                credit.reversedAt = reversedAt
                credit.reversalReason = reversalReason
            }
            if let consumedAt, consumedAt < p.end {
                credit.consumedUnits = credit.units
                credit.consumedAt = max(consumedAt, creditAt)
            }
            made.credit = credit
            try sink.credit(credit)
        }
        return made
    }

    /// A subscription: the initial purchase, SUBSCRIBED, then DID_RENEW and a credit per renewal until
    /// `until` (or the window's end). Returns the initial purchase and the renewals.
    @discardableResult
    func subscribe(
        _ product: WorldCatalog.Product, at time: Int64, until: Int64? = nil, channel: Channel? = nil,
        offer: WorldOffer? = nil, creditRenewals: Bool = true
    ) throws -> (initial: Made, renewals: [AppleTransaction]) {
        let initial = try buy(product, at: time, channel: channel, offer: offer)
        let tokenTx = initial.tx
        try notify(
            "SUBSCRIBED", subtype: "INITIAL_BUY", about: tokenTx, at: initial.receivedAt + rng.int64(1000...20000))
        let renewals = try renew(from: tokenTx, until: until ?? p.end, credit: creditRenewals)
        return (initial, renewals)
    }

    /// DID_RENEW notifications for every period of `previous` that starts before `until`, and a credit for
    /// each unless the backend credits the subscription once (`credit` false).
    func renew(from first: AppleTransaction, until: Int64, credit: Bool = true) throws -> [AppleTransaction] {
        guard let product = WorldCatalog.configuredProducts.first(where: { $0.productID == first.productID }),
            product.isSubscription
        else { return [] }
        var renewals: [AppleTransaction] = []
        var previous = first
        while let expires = previous.expiresDate, expires < min(until, p.end) {
            var tx = newTransaction(
                product, storefront: WorldCatalog.storefront(first.storefront ?? user.home.code), at: expires,
                environment: first.environment ?? "Production", token: first.appAccountToken, original: first,
                reason: "RENEWAL")
            tx.originalPurchaseDate = first.originalPurchaseDate
            sink.countPurchase()
            let notifiedAt = expires + rng.int64(10000...120_000)
            let nextExpires = tx.expiresDate ?? 0
            try notify("DID_RENEW", about: tx, at: notifiedAt, autoRenew: nextExpires < until)
            let creditAt = notifiedAt + rng.int64(500...3000)
            if credit, creditAt < p.end {
                try sink.credit(newCredit(for: tx, order: nil, to: user, at: creditAt))
            }
            renewals.append(tx)
            previous = tx
        }
        return renewals
    }

    /// A refund: optionally a CONSUMPTION_REQUEST first, then REFUND with the revoked transaction.
    @discardableResult
    func refund(
        _ t: AppleTransaction, at time: Int64, percentage: Int64? = nil, consumptionRequest: Bool = false
    ) throws -> AppleTransaction {
        if consumptionRequest {
            try notify(
                "CONSUMPTION_REQUEST", about: t, at: time - rng.int64(2 * WorldTime.hour...20 * WorldTime.hour),
                consumptionReason: "UNINTENDED_PURCHASE")
        }
        var revoked = t
        revoked.revocationDate = time
        revoked.revocationReason = rng.chance(0.5) ? 0 : 1
        revoked.revocationType = percentage == nil ? "REFUND_FULL" : "REFUND_PRORATED"
        revoked.revocationPercentage = percentage
        try notify("REFUND", about: revoked, at: time + rng.int64(5000...60000), autoRenew: false)
        return revoked
    }

    // MARK: normal activity

    /// Random purchase times in the window, sorted.
    func randomTimes(_ count: Int, from: Int64? = nil, to: Int64? = nil) -> [Int64] {
        let lo = from ?? p.start
        let hi = max(lo + 1, (to ?? p.end) - WorldTime.minute)
        return (0..<count).map { _ in rng.int64(lo...hi) }.sorted()
    }

    /// The user's ordinary purchases: consumables, sometimes the non-consumable and a subscription.
    func runNormal(
        minPurchases: Int = 0, allowNoAds: Bool = true, allowSubscription: Bool = true,
        move: (at: Int64, to: WorldCatalog.Storefront)? = nil
    ) throws {
        let r = rng.unit()
        var base = r < 0.4 ? rng.int(1...3) : (r < 0.8 ? rng.int(4...12) : rng.int(13...36))
        let scale = Double(p.end - p.start) / Double(60 * WorldTime.day)
        base = Int((Double(base) * scale).rounded())
        let count = max(max(1, base), minPurchases)
        for time in randomTimes(count) {
            let product = rng.weighted(WorldCatalog.consumableWeights)
            if let move, time >= move.at {
                try buy(product, at: time, storefront: move.to, userCountry: move.to.code)
            } else {
                try buy(product, at: time)
            }
        }
        if allowNoAds && rng.chance(0.05) {
            try buy(WorldCatalog.noAds, at: randomTimes(1)[0])
        }
        if allowSubscription && move == nil && rng.chance(0.08) {
            let product = rng.chance(0.6) ? WorldCatalog.plusWeekly : WorldCatalog.plusMonthly
            let startAt = randomTimes(1, to: p.start + (p.end - p.start) * 7 / 10)[0]
            let until = rng.chance(0.3) ? startAt + Int64(product.periodDays * rng.int(2...4)) * WorldTime.day : p.end
            try subscribe(product, at: startAt, until: until, offer: WorldOffer.forSubscriber(userIndex: user.index))
        }
    }

    /// A time for an injected event, well inside the window (leaves room for follow-ups).
    func scenarioTime(minAfterStart: Int64 = 6 * WorldTime.hour, beforeEnd: Int64 = 3 * WorldTime.day) -> Int64 {
        let lo = p.start + minAfterStart
        let hi = p.end - beforeEnd
        if hi <= lo { return p.start + (p.end - p.start) / 2 }
        return rng.int64(lo...hi)
    }

    // MARK: run

    /// Simulates the user, with the pattern dealt to them if any, then writes the accounts it used (the user
    /// with its final home, and any helper accounts) to the accounts file.
    func run() throws {
        try simulate()
        try writeAccount(user)
        for helper in helpersUsed.values.sorted(by: { $0.index < $1.index }) { try writeAccount(helper) }
    }

    private func writeAccount(_ account: UserProfile) throws {
        // Accounts were created before the window; a fixed function of the index keeps files reproducible.
        try sink.account(account, createdAt: p.start - Int64(1 + account.index % 400) * WorldTime.day)
    }

    private func simulate() throws {
        guard let dealt = p.schedule.scenario(ofUser: user.index) else {
            try runNormal()
            return
        }
        if dealt.scenario.needsFullPriceHome && !WorldCatalog.fullPriceStorefrontCodes.contains(user.home.code) {
            user.home = WorldCatalog.storefront(rng.pick(WorldCatalog.fullPriceStorefrontCodes))
        }
        try inject(dealt.scenario, caseNumber: dealt.caseNumber, slot: dealt.slot)
    }

    /// The helper account `j` of this user's pattern.
    func helper(_ slot: Int, _ j: Int) -> UserProfile {
        var profile = UserProfile.make(index: p.schedule.helperIndex(slot: slot, j), seed: p.seed)
        // Accomplices, victims and family members live where the user lives (their account country says so).
        profile.home = user.home
        helpersUsed[profile.id] = profile
        return profile
    }

    func truth(_ record: TruthRecord) throws { try sink.truth(record) }

    /// A truth record filled from a transaction (and order).
    func truthFor(
        _ pattern: WorldScenario, _ ruleID: String, hit: Bool, tx: AppleTransaction?, order: BackendOrder? = nil,
        user account: UserProfile? = nil, primary: Bool = true, note: String? = nil
    ) -> TruthRecord {
        var t = TruthRecord(pattern.rawValue, ruleID, hit: hit)
        t.primary = primary
        t.transactionID = tx?.transactionID
        t.originalTransactionID = tx?.originalTransactionID
        t.orderID = order?.orderID
        t.userID = (account ?? user).id
        t.bundleID = tx?.bundleID
        t.productID = tx?.productID
        t.storefront = tx?.storefront
        t.note = note
        return t
    }
}
