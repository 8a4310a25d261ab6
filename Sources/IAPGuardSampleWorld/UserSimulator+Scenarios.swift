import Foundation
import IAPGuard

/// The injected patterns: fraud and server bugs (truth `hit`) and benign look-alikes (truth `no-hit`).
extension UserSimulator {
    typealias C = WorldCatalog

    /// Runs the user's ordinary activity plus the records of `scenario`, and writes its truth lines.
    func inject(_ scenario: WorldScenario, caseNumber k: Int, slot: Int) throws {
        switch scenario {
        case .replayedReceipt: try replayedReceipt(k)
        case .sharedTransaction: try sharedTransaction(k, slot)
        case .receiptSharing: try receiptSharing(k, slot)
        case .unknownBundle: try unknownBundle(k)
        case .crossAppRedemption: try crossAppRedemption(k)
        case .productNotInCatalog: try productNotInCatalog(k)
        case .forgedReceipt: try forgedReceipt(k)
        case .currencyArbitrage: try currencyArbitrage(k)
        case .storefrontHopping: try storefrontHopping(k)
        case .displayedPriceMismatch: try displayedPriceMismatch(k)
        case .creditToOtherUser: try creditToOtherUser(slot)
        case .tokenOwnerMismatch: try tokenOwnerMismatch(slot)
        case .tokenMultiAccount: try tokenMultiAccount(slot)
        case .missingCredit: try missingCredit()
        case .refundedStillCredited: try refundedStillCredited(k)
        case .refundAbuse: try refundAbuse()
        case .sandboxCredited: try sandboxCredited(k)
        case .productMismatch: try productMismatch()
        case .quantityMismatch: try quantityMismatch(k)
        case .unconfirmedCredit: try unconfirmedCredit()
        case .familySharing: try familySharing(k, slot)
        case .subscriptionRenewals: try subscriptionRenewals()
        case .testerSandbox: try testerSandbox()
        case .traveller: try traveller(k)
        case .movedCountry: try movedCountry(k)
        case .refundClawedBack: try refundClawedBack(k)
        case .rolledBackRetry: try rolledBackRetry()
        case .restoreNewDevice: try restoreNewDevice(k)
        case .gracePeriodPending: try gracePeriodPending()
        case .refundReversed: try refundReversed()
        case .nativeCheapStorefront: try nativeCheapStorefront(k)
        case .forgedJWSBlocked: try forgedJWSBlocked()
        case .foreignGenuineRefused: try foreignGenuineRefused()
        case .cheapResidentTraveller: try cheapResidentTraveller(k)
        case .sandboxStorefrontTester: try sandboxStorefrontTester()
        case .singleLargeRefund: try singleLargeRefund()
        case .familyRevocations: try familyRevocations(slot)
        case .appleAccountFarm: try appleAccountFarm(slot)
        case .handedOverDevice: try handedOverDevice(slot)
        case .subscriptionUpgrade: try subscriptionUpgrade(k)
        case .familySharedSubscription: try familySharedSubscription(slot)
        case .subscriptionCreditedOnce: try subscriptionCreditedOnce()
        case .subscriptionMovedAccount: try subscriptionMovedAccount(k, slot)
        case .proratedRefundKeptShare: try proratedRefundKeptShare(k)
        case .gracePeriodDaysCredited: try gracePeriodDaysCredited(k)
        case .refundFarmAccounts: try refundFarmAccounts(slot)
        case .movedOutOfCheapCountry: try movedOutOfCheapCountry(k)
        case .firstEntryCredited: try firstEntryCredited()
        case .unpaidOrderCredited: try unpaidOrderCredited(k)
        case .failedOrderRetried: try failedOrderRetried(k)
        case .stalePriceList: try stalePriceList(k)
        case .expiryClockSkew: try expiryClockSkew(k)
        case .bonusReplayed: try bonusReplayed(k)
        case .forgottenSubscriptionRefunds: try forgottenSubscriptionRefunds()
        }
    }

    // MARK: helpers

    func freshOrderID() -> String { "o-" + WorldTime.pad(nextNumber(), 9) }

    /// Writes `tx` over `channel` for `submitter`, returning the JWS or the receipt text.
    @discardableResult
    func deliver(
        _ tx: AppleTransaction, channel: Channel, submitter: String?, orderID: String?, at time: Int64,
        receiptData: String? = nil, foreign: Bool = false
    ) throws -> String {
        switch channel {
        case .jws:
            return try writeJWS(tx, submitter: submitter, orderID: orderID, receivedAt: time, foreign: foreign)
        case .legacy:
            let data = receiptData ?? newReceiptData()
            let latest = tx.expiresDate != nil ? [ApplePayloadEncoder.legacyEntry(tx)] : []
            try writeLegacy(
                [ApplePayloadEncoder.legacyEntry(tx)], latest: latest, app: UserSimulator.app(forBundle: tx.bundleID),
                environment: tx.environment ?? "Production", submitter: submitter, orderID: orderID,
                receivedAt: time, receiptData: data)
            return data
        }
    }

    /// Three ordinary large purchases, so one later refund stays a small share of lifetime spend.
    func fillerPurchases() throws {
        for time in randomTimes(3) { try buy(C.pack2500, at: time, noise: false) }
    }

    /// A sandbox purchase the legacy way: production answers 21007, the sandbox answers 0.
    func legacySandboxPurchase(_ product: C.Product, at time: Int64) throws -> (AppleTransaction, BackendOrder) {
        let tx = newTransaction(product, storefront: user.home, at: time, environment: "Sandbox", token: nil)
        sink.countPurchase()
        let order = newOrder(for: tx, by: user, status: "credited", channel: .legacy)
        try sink.order(order)
        let receivedAt = time + rng.int64(2000...40000)
        let data = newReceiptData()
        try sink.receipt(
            userID: user.id, orderID: order.orderID, receivedAt: receivedAt, receiptData: data,
            response: ApplePayloadEncoder.legacyStatusOnly(21007))
        try writeLegacy(
            [ApplePayloadEncoder.legacyEntry(tx)], app: UserSimulator.app(forBundle: tx.bundleID),
            environment: "Sandbox", submitter: user.id, orderID: order.orderID, receivedAt: receivedAt + 900,
            receiptData: data)
        try sink.credit(newCredit(for: tx, order: order, to: user, at: receivedAt + rng.int64(1500...4000)))
        return (tx, order)
    }

    /// Paid price / reference price after converting through the FX table on the purchase day.
    static func priceRatio(_ product: C.Product, in storefront: C.Storefront, at time: Int64) -> Double? {
        let day = WorldTime.dayNumber(time)
        guard
            let usd = SyntheticFXRates.convert(
                milli: C.localPrice(product, in: storefront), from: storefront.currency, to: "USD", day: day)
        else { return nil }
        return usd / Double(product.referencePriceMilli)
    }

    static func ratioText(_ r: Double?) -> String {
        guard let r else { return "n/a" }
        return SyntheticFXRates.format(r)
    }

    // MARK: fraud and bugs (hit)

    func replayedReceipt(_ k: Int) throws {
        try runNormal(allowNoAds: false)
        let t0 = scenarioTime()
        switch k % 3 {
        case 0, 1:
            let channel: Channel = k % 3 == 0 ? .legacy : .jws
            let made = try buy(k % 3 == 0 ? C.pack1200 : C.pack2500, at: t0, channel: channel, noise: false)
            guard let first = made.order else { return }
            let replayAt = made.receivedAt + rng.int64(WorldTime.day...2 * WorldTime.day)
            var second = newOrder(for: made.tx, by: user, status: "credited", channel: channel)
            second.orderID = freshOrderID()
            second.createdAt = replayAt - rng.int64(3000...20000)
            try sink.order(second)
            if channel == .jws, let jws = made.jws {
                try sink.signedTransaction(jws, userID: user.id, orderID: second.orderID, receivedAt: replayAt)
            } else {
                try deliver(
                    made.tx, channel: .legacy, submitter: user.id, orderID: second.orderID, at: replayAt,
                    receiptData: made.receiptData)
            }
            try sink.credit(newCredit(for: made.tx, order: second, to: user, at: replayAt + rng.int64(300...3000)))
            try truth(
                truthFor(
                    .replayedReceipt, "IAP-001", hit: true, tx: made.tx, order: first,
                    note:
                        "the same \(channel == .jws ? "signed transaction" : "receipt") replayed for order \(second.orderID) and credited again"
                ))
        default:
            let made = try buy(C.pack550, at: t0, noise: false)
            guard let credit = made.credit else { return }
            var again = newCredit(
                for: made.tx, order: made.order, to: user, at: (credit.creditedAt ?? t0) + rng.int64(800...5000))
            again.units = credit.units
            try sink.credit(again)
            var t = truthFor(.replayedReceipt, "IAP-001", hit: true, tx: made.tx, order: made.order)
            t.pattern = "double-credit-retry"
            t.note = "a retried request credited the same transaction twice"
            try truth(t)
        }
    }

    func sharedTransaction(_ k: Int, _ slot: Int) throws {
        try runNormal(allowNoAds: false)
        let other = helper(slot, 0)
        let t0 = scenarioTime()
        if k % 2 == 0 {
            let made = try buy(C.pack2500, at: t0, channel: .legacy, noise: false)
            let at = made.receivedAt + rng.int64(WorldTime.hour...2 * WorldTime.day)
            var order = newOrder(for: made.tx, by: other, status: "credited", channel: .legacy)
            order.orderID = freshOrderID()
            order.createdAt = at - rng.int64(3000...30000)
            try sink.order(order)
            try deliver(
                made.tx, channel: .legacy, submitter: other.id, orderID: order.orderID, at: at,
                receiptData: made.receiptData)
            try sink.credit(newCredit(for: made.tx, order: order, to: other, at: at + rng.int64(300...3000)))
            let note = "credited to \(user.id) and \(other.id)"
            try truth(truthFor(.sharedTransaction, "IAP-002", hit: true, tx: made.tx, order: made.order, note: note))
            // Credited once to each account: IAP-002's incident, never also a duplicate credit.
            try truth(
                truthFor(
                    .sharedTransaction, "IAP-001", hit: false, tx: made.tx, order: made.order,
                    note: "\(note): once each, so not a duplicate credit (IAP-002 names the account that gained)"))
            // The payment carries the buyer's applicationUsername (the first order's); the second account's
            // own order and username came later, so its credit is not the marker owner's.
            try truth(
                truthFor(
                    .sharedTransaction, "IAP-012", hit: true, tx: made.tx, order: order, user: other, primary: false,
                    note: note))
        } else {
            let made = try buy(C.noAds, at: t0, channel: .legacy, noise: false)
            let at = t0 + rng.int64(WorldTime.hour...2 * WorldTime.day)
            let restored = newTransaction(C.noAds, storefront: user.home, at: at, token: nil, original: made.tx)
            try deliver(restored, channel: .legacy, submitter: other.id, orderID: nil, at: at + rng.int64(2000...9000))
            try sink.credit(newCredit(for: restored, order: nil, to: other, at: at + rng.int64(10000...20000)))
            let note = "non-consumable bought by \(user.id), restored and credited to \(other.id)"
            try truth(truthFor(.sharedTransaction, "IAP-002", hit: true, tx: restored, user: other, note: note))
        }
    }

    /// One receipt (or JWS) posted by three more accounts; only the buyer is credited. A receipt of coins unlocks
    /// nothing by itself: a blocked attempt (informational). One of `noads` unlocks it in every account that posts
    /// it (high). Cases alternate legacy and signed, and every third is the `noads` receipt.
    func receiptSharing(_ k: Int, _ slot: Int) throws {
        let unlocks = k % 3 == 2
        try runNormal(allowNoAds: !unlocks)
        let t0 = scenarioTime()
        let channel: Channel = k % 2 == 0 ? .legacy : .jws
        let made = try buy(unlocks ? C.noAds : C.pack550, at: t0, channel: channel, noise: false)
        let shared = (channel == .jws ? made.jws : made.receiptData) ?? ""
        var others: [String] = []
        for j in 0..<3 {
            let other = helper(slot, j)
            others.append(other.id)
            let at = made.receivedAt + rng.int64(WorldTime.hour...2 * WorldTime.day)
            if channel == .jws {
                try sink.signedTransaction(shared, userID: other.id, orderID: nil, receivedAt: at)
            } else {
                try deliver(made.tx, channel: .legacy, submitter: other.id, orderID: nil, at: at, receiptData: shared)
            }
        }
        var t = truthFor(.receiptSharing, "IAP-003", hit: true, tx: made.tx, order: made.order)
        t.level = unlocks ? "high" : "informational"
        // A JWS's hash changes with every (randomised) signature, so only legacy receipts get one here:
        // truth stays byte-identical per seed. The signed variant is keyed by its transaction id.
        t.receiptSHA256 = channel == .legacy ? Hashing.sha256Hex(shared) : nil
        t.note =
            "one \(channel == .jws ? "signed transaction" : "receipt") submitted by \(user.id), "
            + others.joined(separator: ", ") + "; only the buyer was credited"
        try truth(t)
    }

    func unknownBundle(_ k: Int) throws {
        try runNormal()
        let t0 = scenarioTime()
        if k % 2 == 1 {
            // A genuine signed transaction of the sister app (Apple's signature and chain are valid), redeemed
            // and credited: verification refuses it as wrong-bundle, which is a bundle mismatch, not a forgery.
            let (tx, order) = try redeemSisterAppTip(at: t0, channel: .jws, credited: true)
            var t = truthFor(
                .unknownBundle, "IAP-004", hit: true, tx: tx, order: order,
                note: "a genuine \(C.cheapApp.bundleID) signed transaction redeemed for \(C.pack2500.productID)")
            t.level = "high"
            try truth(t)
            try truth(
                truthFor(
                    .unknownBundle, "IAP-020", hit: false, tx: tx, order: order,
                    note: "validly signed by Apple for another app: not a forgery"))
            return
        }
        let (tx, order) = try redeemSisterAppTip(at: t0, channel: .legacy, credited: true)
        let note = "a \(C.cheapApp.bundleID) receipt redeemed for \(C.pack2500.productID)"
        try truth(truthFor(.unknownBundle, "IAP-004", hit: true, tx: tx, order: order, note: note))
        // One incident, IAP-004's: the order's bundle and the credited product differ too, but those rules
        // leave a transaction of an app that is not configured to IAP-004.
        let once = "\(note): IAP-004's incident, not reported again"
        try truth(truthFor(.unknownBundle, "IAP-005", hit: false, tx: tx, order: order, note: once))
        try truth(truthFor(.unknownBundle, "IAP-018", hit: false, tx: tx, order: order, note: once))
    }

    /// The sister app's tip presented for a `pack2500` order of the coins app: credited as `pack2500` when
    /// `credited`, else the order fails and nothing is credited.
    func redeemSisterAppTip(at t0: Int64, channel: Channel, credited: Bool) throws -> (AppleTransaction, BackendOrder) {
        let tx = newTransaction(C.cheapTip, storefront: user.home, at: t0, token: nil)
        sink.countPurchase()
        var order = newOrder(for: tx, by: user, status: credited ? "credited" : "failed", channel: channel)
        order.bundleID = C.coinsApp.bundleID
        order.productID = C.pack2500.productID
        order.price = C.localPrice(C.pack2500, in: user.home)
        try sink.order(order)
        let at = t0 + rng.int64(2000...40000)
        try deliver(tx, channel: channel, submitter: user.id, orderID: order.orderID, at: at)
        if credited {
            try sink.credit(newCredit(for: tx, order: order, to: user, at: at + 900, product: C.pack2500))
        }
        return (tx, order)
    }

    func crossAppRedemption(_ k: Int) throws {
        try runNormal()
        let t0 = scenarioTime()
        let channel: Channel = k % 2 == 0 ? .jws : .legacy
        let tx = newTransaction(
            C.plusMonthly, storefront: user.home, at: t0, token: channel == .jws ? user.token : nil)
        sink.countPurchase()
        var order = newOrder(for: tx, by: user, status: "credited", channel: channel)
        order.bundleID = C.coinsApp.bundleID
        try sink.order(order)
        let at = t0 + rng.int64(2000...40000)
        try deliver(tx, channel: channel, submitter: user.id, orderID: order.orderID, at: at)
        try sink.credit(newCredit(for: tx, order: order, to: user, at: at + 700))
        try truth(
            truthFor(
                .crossAppRedemption, "IAP-005", hit: true, tx: tx, order: order,
                note: "order placed in \(C.coinsApp.bundleID), paid in \(C.plusApp.bundleID)"))
    }

    func productNotInCatalog(_ k: Int) throws {
        try runNormal()
        let made = try buy(C.retiredStarter, at: scenarioTime(), channel: k % 2 == 0 ? .legacy : .jws, noise: false)
        try truth(
            truthFor(
                .productNotInCatalog, "IAP-006", hit: true, tx: made.tx, order: made.order,
                note: "retired product not in the configured catalog"))
    }

    func forgedReceipt(_ k: Int) throws {
        try runNormal()
        // (a) a jailbreak tool's fake answer: transaction id `com.urus.iap.…`.
        let t0 = scenarioTime()
        var fake = newTransaction(C.pack6500, storefront: user.home, at: t0, token: nil)
        fake.transactionID = "com.urus.iap." + String(rng.int64(100_000_000...999_999_999))
        fake.originalTransactionID = fake.transactionID
        var order = newOrder(for: fake, by: user, status: "credited", channel: .legacy)
        order.orderID = freshOrderID()
        try sink.order(order)
        let at = t0 + rng.int64(2000...40000)
        try deliver(fake, channel: .legacy, submitter: user.id, orderID: order.orderID, at: at)
        try sink.credit(newCredit(for: fake, order: order, to: user, at: at + 600))
        try truth(
            truthFor(.forgedReceipt, "IAP-007", hit: true, tx: fake, order: order, note: "com.urus.iap transaction id"))

        // (b) a forged legacy answer with one anomaly.
        let t1 = scenarioTime()
        let at1 = t1 + rng.int64(2000...40000)
        switch k % 3 {
        case 0:
            let tx = newTransaction(C.pack2500, storefront: user.home, at: t1, token: nil)
            let o = newOrder(for: tx, by: user, status: "credited", channel: .legacy)
            try sink.order(o)
            var quirks = ApplePayloadEncoder.LegacyQuirks()
            quirks.purchaseDateTextOffset = -3 * WorldTime.day
            try writeLegacy(
                [ApplePayloadEncoder.legacyEntry(tx, quirks: quirks)], app: C.coinsApp, submitter: user.id,
                orderID: o.orderID, receivedAt: at1, receiptData: newReceiptData())
            try sink.credit(newCredit(for: tx, order: o, to: user, at: at1 + 500))
            try truth(
                truthFor(
                    .forgedReceipt, "IAP-007", hit: true, tx: tx, order: o,
                    note: "date-mismatch: purchase_date text 3 days off purchase_date_ms"))
        case 1:
            var tx = newTransaction(C.plusMonthly, storefront: user.home, at: t1, token: nil)
            tx.expiresDate = WorldTime.daysFromCivil(year: 2099, month: 1, day: 1) * WorldTime.day
            let o = newOrder(for: tx, by: user, status: "credited", channel: .legacy)
            try sink.order(o)
            try deliver(tx, channel: .legacy, submitter: user.id, orderID: o.orderID, at: at1)
            try sink.credit(newCredit(for: tx, order: o, to: user, at: at1 + 500))
            try truth(
                truthFor(
                    .forgedReceipt, "IAP-007", hit: true, tx: tx, order: o,
                    note: "expiry-far-future: subscription expiring 2099-01-01"))
        default:
            let foreignProduct = C.Product(
                productID: "com.crackapp.unlimited.coins", bundleID: C.coinsApp.bundleID, type: "Consumable",
                units: 10000, tier: 0, periodDays: 0, inConfig: false)
            let tx = newTransaction(foreignProduct, storefront: user.home, at: t1, token: nil)
            let o = newOrder(for: tx, by: user, status: "credited", channel: .legacy)
            try sink.order(o)
            try deliver(tx, channel: .legacy, submitter: user.id, orderID: o.orderID, at: at1)
            try sink.credit(newCredit(for: tx, order: o, to: user, at: at1 + 500, units: 10000))
            let note = "product-outside-bundle: \(foreignProduct.productID) in a \(C.coinsApp.bundleID) receipt"
            try truth(truthFor(.forgedReceipt, "IAP-007", hit: true, tx: tx, order: o, note: note))
            // One incident, IAP-007's: the product outside the bundle is the forgery marker.
            try truth(
                truthFor(
                    .forgedReceipt, "IAP-006", hit: false, tx: tx, order: o,
                    note: "\(note): IAP-007's forgery, not reported again"))
        }
    }

    func currencyArbitrage(_ k: Int) throws {
        try runNormal(allowSubscription: false)
        let t0 = scenarioTime(beforeEnd: 4 * WorldTime.day)
        let codes = C.cheapStorefrontCodes
        var cheap = C.storefront(codes[(k + 1) % codes.count])
        for i in 0..<codes.count {
            let candidate = C.storefront(codes[(k + 1 + i) % codes.count])
            if let r = UserSimulator.priceRatio(C.pack2500, in: candidate, at: t0), r < 0.45 {
                cheap = candidate
                break
            }
        }
        let count = rng.int(2...3)
        for i in 0..<count {
            let at = t0 + Int64(i) * rng.int64(2 * WorldTime.hour...WorldTime.day)
            let product = rng.chance(0.5) ? C.pack2500 : C.pack6500
            let made = try buy(
                product, at: at, channel: .jws, storefront: cheap, userCountry: user.home.code, noise: false)
            let ratio = UserSimulator.priceRatio(product, in: cheap, at: at)
            // One finding per user and storefront: it names the first purchase, the later ones are evidence.
            var t = truthFor(
                .currencyArbitrage, "IAP-008", hit: true, tx: made.tx, order: made.order,
                note:
                    "user country \(user.home.code), storefront \(cheap.code), price ratio \(UserSimulator.ratioText(ratio))"
            )
            t.inEvidence = i > 0
            try truth(t)
        }
    }

    func storefrontHopping(_ k: Int) throws {
        try runNormal(allowSubscription: false)
        let others = C.fullPriceStorefrontCodes.filter { $0 != user.home.code }
        let t0 = scenarioTime(beforeEnd: 2 * WorldTime.day)
        let span = min(20 * WorldTime.day, p.end - t0 - WorldTime.day)
        var last: Made?
        var visited = [user.home.code]
        for i in 0..<3 {
            let code = others[(k + i) % others.count]
            visited.append(code)
            let at = t0 + span * Int64(i) / 3
            last = try buy(
                C.pack550, at: at, channel: .jws, storefront: C.storefront(code), userCountry: user.home.code,
                noise: false)
        }
        var t = truthFor(.storefrontHopping, "IAP-009", hit: true, tx: last?.tx, order: last?.order)
        t.appAccountToken = user.token
        t.storefront = nil
        t.note = "storefronts " + visited.joined(separator: ",") + " within 30 days"
        try truth(t)
    }

    func displayedPriceMismatch(_ k: Int) throws {
        try runNormal()
        let t0 = scenarioTime()
        let tx = newTransaction(C.pack1200, storefront: user.home, at: t0, token: user.token)
        sink.countPurchase()
        var order = newOrder(for: tx, by: user, status: "credited", channel: .jws)
        if k % 2 == 0 || user.home.currency == "USD" {
            order.price = C.localPrice(C.pack100, in: user.home)
        } else {
            order.currency = "USD"
            order.price = C.pack1200.referencePriceMilli
        }
        try sink.order(order)
        let at = t0 + rng.int64(2000...40000)
        try deliver(tx, channel: .jws, submitter: user.id, orderID: order.orderID, at: at)
        try sink.credit(newCredit(for: tx, order: order, to: user, at: at + 800))
        let shown = C.decimalText(milli: order.price ?? 0, minorDigits: 2) + " " + (order.currency ?? "")
        let charged =
            C.decimalText(milli: tx.price ?? 0, minorDigits: user.home.minorDigits) + " " + (tx.currency ?? "")
        try truth(
            truthFor(
                .displayedPriceMismatch, "IAP-010", hit: true, tx: tx, order: order,
                note: "displayed \(shown), Apple charged \(charged)"))
    }

    func creditToOtherUser(_ slot: Int) throws {
        try runNormal()
        let victim = helper(slot, 0)
        let t0 = scenarioTime()
        let tx = newTransaction(C.pack1200, storefront: victim.home, at: t0, token: nil)
        sink.countPurchase()
        var order = newOrder(for: tx, by: victim, status: "credited", channel: .legacy)
        order.applicationUsername = nil
        try sink.order(order)
        let at = t0 + rng.int64(2 * WorldTime.hour...30 * WorldTime.hour)
        try deliver(tx, channel: .legacy, submitter: user.id, orderID: order.orderID, at: at)
        try sink.credit(newCredit(for: tx, order: order, to: user, at: at + 1200))
        try truth(
            truthFor(
                .creditToOtherUser, "IAP-011", hit: true, tx: tx, order: order,
                note: "order created by \(victim.id); pending transaction re-delivered in \(user.id)'s session"))
    }

    func tokenOwnerMismatch(_ slot: Int) throws {
        try runNormal()
        let victim = helper(slot, 0)
        let t0 = scenarioTime()
        let tx = newTransaction(C.pack2500, storefront: user.home, at: t0, token: victim.token)
        sink.countPurchase()
        var victimOrder = newOrder(for: tx, by: victim, status: "created", channel: .jws)
        victimOrder.transactionID = nil
        victimOrder.userCountry = user.home.code
        try sink.order(victimOrder)
        let at = t0 + rng.int64(2 * WorldTime.hour...30 * WorldTime.hour)
        var order = newOrder(for: tx, by: user, status: "credited", channel: .jws)
        order.orderID = freshOrderID()
        order.createdAt = at - rng.int64(3000...20000)
        try sink.order(order)
        try deliver(tx, channel: .jws, submitter: user.id, orderID: order.orderID, at: at)
        try sink.credit(newCredit(for: tx, order: order, to: user, at: at + 900))
        var t = truthFor(
            .tokenOwnerMismatch, "IAP-012", hit: true, tx: tx, order: order,
            note: "appAccountToken belongs to \(victim.id) (order \(victimOrder.orderID)), credited to \(user.id)")
        t.appAccountToken = victim.token
        try truth(t)
    }

    func tokenMultiAccount(_ slot: Int) throws {
        try runNormal()
        let farmToken = rng.uuid()
        let accounts = [user, helper(slot, 0), helper(slot, 1)]
        let t0 = scenarioTime()
        var made: [Made] = []
        for (i, account) in accounts.enumerated() {
            let at = t0 + Int64(i) * rng.int64(WorldTime.hour...WorldTime.day)
            made.append(
                try buy(
                    C.pack550, at: at, channel: .jws, storefront: user.home, buyer: account,
                    userCountry: user.home.code, noise: false, token: farmToken))
        }
        // The first account owns the token; each other account credited under it is one finding, named by
        // that account and its credited transaction.
        for (account, purchase) in zip(accounts, made).dropFirst() {
            var t = truthFor(
                .tokenMultiAccount, "IAP-013", hit: true, tx: purchase.tx, order: purchase.order, user: account)
            t.appAccountToken = farmToken
            t.note = "\(account.id) credited under the appAccountToken of \(user.id) (one token, 3 accounts)"
            try truth(t)
        }
    }

    func missingCredit() throws {
        try runNormal()
        let made = try buy(C.pack2500, at: scenarioTime(), channel: .jws, credited: false, noise: false)
        try truth(
            truthFor(
                .missingCredit, "IAP-014", hit: true, tx: made.tx, order: made.order,
                note: "verified Production purchase, order paid, never credited"))
    }

    func refundedStillCredited(_ k: Int) throws {
        try runNormal(allowNoAds: false, allowSubscription: false)
        try fillerPurchases()
        // The refund must be older than IAP-015's 72 h grace at the world's end.
        let t0 = scenarioTime(beforeEnd: 5 * WorldTime.day)
        let refundAt = t0 + rng.int64(6 * WorldTime.hour...WorldTime.day)
        switch k % 3 {
        case 0:
            let made = try buy(C.noAds, at: t0, noise: false)
            try refund(made.tx, at: refundAt)
            try truth(
                truthFor(
                    .refundedStillCredited, "IAP-015", hit: true, tx: made.tx, order: made.order,
                    note: "REFUND received, credit never reversed"))
        case 1:
            let sub = try subscribe(C.plusMonthly, at: t0, until: t0 + WorldTime.day)
            try refund(sub.initial.tx, at: refundAt, percentage: 50000)
            try truth(
                truthFor(
                    .refundedStillCredited, "IAP-015", hit: true, tx: sub.initial.tx, order: sub.initial.order,
                    note: "prorated refund (50 %), credit never reduced"))
        default:
            let made = try buy(C.noAds, at: t0, channel: .legacy, noise: false)
            let revoked = try refund(made.tx, at: refundAt)
            try deliver(
                revoked, channel: .legacy, submitter: user.id, orderID: nil,
                at: refundAt + rng.int64(2 * WorldTime.hour...10 * WorldTime.hour))
            try truth(
                truthFor(
                    .refundedStillCredited, "IAP-015", hit: true, tx: made.tx, order: made.order,
                    note: "legacy cancellation_date and REFUND, credit never reversed"))
        }
    }

    func refundAbuse() throws {
        try runNormal(allowSubscription: false)
        let t0 = scenarioTime(beforeEnd: 4 * WorldTime.day)
        var last: Made?
        for i in 0..<3 {
            let at = t0 + Int64(i) * rng.int64(2 * WorldTime.hour...12 * WorldTime.hour)
            let refundAt = at + rng.int64(20 * WorldTime.hour...40 * WorldTime.hour)
            let refunded = i < 2
            let reversedAt = refundAt + rng.int64(WorldTime.hour...6 * WorldTime.hour)
            // The coins are spent within hours, before the refund is asked for.
            let made = try buy(
                C.pack2500, at: at, noise: false, reversedAt: refunded ? reversedAt : nil,
                reversalReason: refunded ? "refund" : nil, consumedAt: at + 3 * WorldTime.hour)
            if refunded {
                try refund(made.tx, at: refundAt, consumptionRequest: true)
                last = made
            }
        }
        var t = truthFor(.refundAbuse, "IAP-016", hit: true, tx: last?.tx, order: last?.order)
        t.note = "2 consumable refunds after consumption within 3 days (credits clawed back)"
        try truth(t)
    }

    func sandboxCredited(_ k: Int) throws {
        try runNormal()
        let t0 = scenarioTime()
        if k % 4 == 2 {
            // StoreKit's LocalTesting environment: signed on a developer's Mac, never by Apple.
            let tx = newTransaction(
                C.pack2500, storefront: user.home, at: t0, environment: "LocalTesting", token: user.token)
            sink.countPurchase()
            let order = newOrder(for: tx, by: user, status: "credited", channel: .jws)
            try sink.order(order)
            let receivedAt = t0 + rng.int64(2000...40000)
            try deliver(tx, channel: .jws, submitter: user.id, orderID: order.orderID, at: receivedAt, foreign: true)
            try sink.credit(newCredit(for: tx, order: order, to: user, at: receivedAt + rng.int64(200...3000)))
            try truth(
                truthFor(
                    .sandboxCredited, "IAP-017", hit: true, tx: tx, order: order,
                    note: "LocalTesting signed transaction credited to a non-tester"))
        } else if k % 2 == 0 {
            let made = try buy(C.pack2500, at: t0, channel: .jws, environment: "Sandbox", noise: false)
            try truth(
                truthFor(
                    .sandboxCredited, "IAP-017", hit: true, tx: made.tx, order: made.order,
                    note: "Sandbox signed transaction credited to a non-tester"))
        } else {
            let (tx, order) = try legacySandboxPurchase(C.pack6500, at: t0)
            try truth(
                truthFor(
                    .sandboxCredited, "IAP-017", hit: true, tx: tx, order: order,
                    note: "21007 then Sandbox receipt credited to a non-tester"))
        }
    }

    func productMismatch() throws {
        try runNormal()
        unfinished = nil
        let t0 = scenarioTime(minAfterStart: 2 * WorldTime.day + 6 * WorldTime.hour)
        let old = try buy(
            C.pack100, at: t0 - rng.int64(WorldTime.day...2 * WorldTime.day), channel: .legacy, noise: false)
        let tx = newTransaction(C.pack2500, storefront: user.home, at: t0, token: nil)
        sink.countPurchase()
        let order = newOrder(for: tx, by: user, status: "credited", channel: .legacy)
        try sink.order(order)
        let at = t0 + rng.int64(2000...40000)
        try writeLegacy(
            [ApplePayloadEncoder.legacyEntry(old.tx), ApplePayloadEncoder.legacyEntry(tx)], app: C.coinsApp,
            submitter: user.id, orderID: order.orderID, receivedAt: at, receiptData: newReceiptData())
        try sink.credit(newCredit(for: tx, order: order, to: user, at: at + 700, product: C.pack100))
        try truth(
            truthFor(
                .productMismatch, "IAP-018", hit: true, tx: tx, order: order,
                note: "credited \(C.pack100.productID) from in_app[0] (unfinished \(old.tx.transactionID))"))
    }

    func quantityMismatch(_ k: Int) throws {
        try runNormal()
        let t0 = scenarioTime()
        if k % 2 == 0 {
            let made = try buy(C.pack550, at: t0, noise: false, creditUnits: C.pack550.units * 5)
            try truth(
                truthFor(
                    .quantityMismatch, "IAP-019", hit: true, tx: made.tx, order: made.order,
                    note: "quantity 1, credited 5 × 550 units"))
        } else {
            let made = try buy(
                C.pack550, at: t0, channel: .legacy, quantity: 3, noise: false, creditUnits: C.pack550.units)
            try truth(
                truthFor(
                    .quantityMismatch, "IAP-019", hit: true, tx: made.tx, order: made.order,
                    note: "quantity 3, credited 1 × 550 units"))
        }
    }

    func unconfirmedCredit() throws {
        try runNormal()
        // (a) a credit for a transaction Apple never reported.
        let t0 = scenarioTime()
        let ghost = newTransaction(C.pack6500, storefront: user.home, at: t0, token: user.token)
        let ghostOrder = newOrder(for: ghost, by: user, status: "credited", channel: .jws)
        try sink.order(ghostOrder)
        try sink.credit(newCredit(for: ghost, order: ghostOrder, to: user, at: t0 + rng.int64(5000...60000)))
        var ghostTruth = truthFor(
            .unconfirmedCredit, "IAP-020", hit: true, tx: ghost, order: ghostOrder, note: "no Apple sighting at all")
        ghostTruth.level = "high"
        try truth(ghostTruth)
        // (b) a signed transaction from an untrusted chain, credited.
        let t1 = scenarioTime()
        let forged = newTransaction(C.pack6500, storefront: user.home, at: t1, token: user.token)
        let order = newOrder(for: forged, by: user, status: "credited", channel: .jws)
        try sink.order(order)
        let at = t1 + rng.int64(2000...40000)
        try deliver(forged, channel: .jws, submitter: user.id, orderID: order.orderID, at: at, foreign: true)
        try sink.credit(newCredit(for: forged, order: order, to: user, at: at + 700))
        var forgedTruth = truthFor(
            .unconfirmedCredit, "IAP-020", hit: true, tx: forged, order: order,
            note: "JWS signed by an untrusted root, credited")
        forgedTruth.level = "critical"
        try truth(forgedTruth)
    }

    // MARK: benign look-alikes (no-hit)

    func familySharing(_ k: Int, _ slot: Int) throws {
        try runNormal(allowNoAds: false)
        let member = helper(slot, 0)
        let t0 = scenarioTime(beforeEnd: 5 * WorldTime.day)
        let made = try buy(C.noAds, at: t0, channel: .jws, noise: false)
        let at = t0 + rng.int64(WorldTime.hour...2 * WorldTime.day)
        var shared = newTransaction(
            C.noAds, storefront: user.home, at: at, token: nil, original: made.tx, ownership: "FAMILY_SHARED")
        shared.appTransactionID = UserSimulator.appTransactionID(of: member)
        try deliver(shared, channel: .jws, submitter: member.id, orderID: nil, at: at + rng.int64(2000...30000))
        var credit = newCredit(for: shared, order: nil, to: member, at: at + rng.int64(31000...60000))
        // Every other case: the purchaser stops sharing; Apple sends REVOKE and the backend takes the
        // entitlement back in time.
        let revokeAt = at + rng.int64(6 * WorldTime.hour...WorldTime.day)
        if k % 2 == 1 {
            credit.reversedAt = revokeAt + rng.int64(WorldTime.hour...3 * WorldTime.hour)
            credit.reversalReason = "revoke"
        }
        try sink.credit(credit)
        let note = "bought by \(user.id), FAMILY_SHARED to \(member.id)"
        try truth(truthFor(.familySharing, "IAP-002", hit: false, tx: shared, user: member, note: note))
        try truth(truthFor(.familySharing, "IAP-013", hit: false, tx: shared, user: member, note: note))
        try truth(truthFor(.familySharing, "IAP-021", hit: false, tx: shared, user: member, note: note))
        if k % 2 == 1 {
            try familyRevoke(shared, at: revokeAt)
            try truth(
                truthFor(
                    .familySharing, "IAP-015", hit: false, tx: shared, user: member,
                    note: "family sharing stopped: REVOKE, entitlement reversed within hours"))
        }
    }

    /// Apple's REVOKE of a family member's shared copy when the purchaser stops sharing.
    func familyRevoke(_ shared: AppleTransaction, at revokeAt: Int64) throws {
        var revoked = shared
        revoked.revocationDate = revokeAt
        revoked.revocationReason = 0
        revoked.revocationType = "FAMILY_REVOKE"
        try notify("REVOKE", about: revoked, at: revokeAt + rng.int64(5000...60000), autoRenew: false)
    }

    func subscriptionRenewals() throws {
        try runNormal(allowSubscription: false)
        let product = C.plusWeekly
        let originalStart = p.start - 14 * WorldTime.day + rng.int64(WorldTime.hour...2 * WorldTime.day)
        let original = newTransaction(
            product, storefront: user.home, at: originalStart, token: user.storeKit2 ? user.token : nil)
        // The original purchase predates the window: only in-window renewals are written.
        var renewals: [AppleTransaction] = []
        var previous = original
        while let expires = previous.expiresDate, expires < p.start {
            var skipped = newTransaction(
                product, storefront: user.home, at: expires, token: original.appAccountToken, original: original,
                reason: "RENEWAL")
            skipped.originalPurchaseDate = original.originalPurchaseDate
            previous = skipped
        }
        renewals = try renew(from: previous, until: p.end)
        guard let first = renewals.first else { return }
        try truth(
            truthFor(
                .subscriptionRenewals, "IAP-002", hit: false, tx: first,
                note: "\(renewals.count) renewals of one original transaction, all credited to \(user.id)"))
    }

    func testerSandbox() throws {
        try runNormal()
        let t0 = scenarioTime()
        let made = try buy(C.pack2500, at: t0, channel: .jws, environment: "Sandbox", noise: false)
        try truth(
            truthFor(
                .testerSandbox, "IAP-017", hit: false, tx: made.tx, order: made.order,
                note: "Sandbox purchase credited to an allow-listed tester"))
        let (tx, order) = try legacySandboxPurchase(C.pack550, at: t0 + rng.int64(WorldTime.hour...WorldTime.day))
        try truth(
            truthFor(
                .testerSandbox, "IAP-017", hit: false, tx: tx, order: order,
                note: "App Review style 21007 → Sandbox receipt credited to an allow-listed tester"))
    }

    func traveller(_ k: Int) throws {
        try runNormal(allowSubscription: false)
        let others = C.fullPriceStorefrontCodes.filter { $0 != user.home.code }
        let trip = C.storefront(others[k % others.count])
        let t0 = scenarioTime()
        for i in 0..<2 {
            let at = t0 + Int64(i) * rng.int64(2 * WorldTime.hour...WorldTime.day)
            let product = i == 0 ? C.pack550 : C.pack1200
            let made = try buy(
                product, at: at, channel: .jws, storefront: trip, userCountry: user.home.code, noise: false)
            try truth(
                truthFor(
                    .traveller, "IAP-008", hit: false, tx: made.tx, order: made.order,
                    note:
                        "user country \(user.home.code) travelling in \(trip.code), normal local price (ratio \(UserSimulator.ratioText(UserSimulator.priceRatio(product, in: trip, at: at))))"
                ))
        }
    }

    func movedCountry(_ k: Int) throws {
        let others = C.fullPriceStorefrontCodes.filter { $0 != user.home.code }
        let newHome = C.storefront(others[k % others.count])
        let moveAt = p.start + (p.end - p.start) / 2
        let before = user.home.code
        try buy(C.pack550, at: rng.int64((p.start + WorldTime.hour)...(moveAt - WorldTime.hour)), noise: false)
        try runNormal(allowSubscription: false, move: (moveAt, newHome))
        try buy(
            C.pack1200, at: rng.int64((moveAt + WorldTime.hour)...(p.end - 2 * WorldTime.hour)), storefront: newHome,
            userCountry: newHome.code, noise: false)
        var t = truthFor(.movedCountry, "IAP-009", hit: false, tx: nil)
        t.appAccountToken = user.token
        t.maxLevel = "informational"  // two storefronts alone is informational at most
        t.note = "exactly 2 storefronts: moved from \(before) to \(newHome.code)"
        try truth(t)
    }

    func refundClawedBack(_ k: Int) throws {
        try runNormal(allowNoAds: false, allowSubscription: false)
        try fillerPurchases()
        let t0 = scenarioTime()
        let refundAt = t0 + rng.int64(6 * WorldTime.hour...WorldTime.day)
        let reversedAt = refundAt + rng.int64(WorldTime.hour...6 * WorldTime.hour)
        let product = k % 2 == 0 ? C.noAds : C.plusMonthly
        // Every third one comes from an append-only ledger: the grant is never edited, and a row of its own
        // with negative units takes it back.
        let ledgerRow = k % 3 == 2
        let made = try buy(
            product, at: t0, noise: false, reversedAt: ledgerRow ? nil : reversedAt,
            reversalReason: ledgerRow ? nil : "refund")
        if product.isSubscription {
            try notify("SUBSCRIBED", subtype: "INITIAL_BUY", about: made.tx, at: made.receivedAt + 3000)
        }
        try refund(made.tx, at: refundAt)
        if ledgerRow, let granted = made.credit, reversedAt < p.end {
            var back = newCredit(for: made.tx, order: made.order, to: user, at: reversedAt)
            back.units = -(granted.units ?? 1)
            back.reversalReason = "refund"
            try sink.credit(back)
        }
        try truth(
            truthFor(
                .refundClawedBack, "IAP-015", hit: false, tx: made.tx, order: made.order,
                note: ledgerRow
                    ? "refunded; clawed back within hours by a ledger row of negative units"
                    : "refunded, credit reversed within hours"))
    }

    func rolledBackRetry() throws {
        try runNormal()
        let made = try buy(C.pack1200, at: scenarioTime(), noise: false)
        guard let credit = made.credit, let creditedAt = credit.creditedAt else { return }
        var duplicate = newCredit(for: made.tx, order: made.order, to: user, at: creditedAt + rng.int64(300...2000))
        duplicate.reversedAt = (duplicate.creditedAt ?? creditedAt) + rng.int64(1000...5000)
        duplicate.reversalReason = "rollback"
        try sink.credit(duplicate)
        try truth(
            truthFor(
                .rolledBackRetry, "IAP-001", hit: false, tx: made.tx, order: made.order,
                note: "duplicate credit from a retry, rolled back"))
    }

    /// The non-consumable restored on a new device (StoreKit 1: a new transaction id under the original's).
    /// Even cases: the backend grants it again to the same user; odd cases: it grants nothing, the user
    /// already owns it, and the restore cost nothing, so no credit is missing. Every fourth case is StoreKit 2:
    /// the new device re-delivers the same signed transaction (no new id) and the backend writes another
    /// unlock row for it, to the same user.
    func restoreNewDevice(_ k: Int) throws {
        try runNormal(allowNoAds: false)
        let t0 = scenarioTime()
        if k % 4 == 2 {
            let made = try buy(C.noAds, at: t0, channel: .jws, noise: false)
            let at = t0 + rng.int64(WorldTime.day...2 * WorldTime.day)
            try deliver(made.tx, channel: .jws, submitter: user.id, orderID: nil, at: at)
            try sink.credit(newCredit(for: made.tx, order: nil, to: user, at: at + rng.int64(1000...9000)))
            try truth(
                truthFor(
                    .restoreNewDevice, "IAP-001", hit: false, tx: made.tx, order: made.order,
                    note: "StoreKit 2 restore on a new device: the same transaction unlocked again for \(user.id)"))
            return
        }
        let made = try buy(C.noAds, at: t0, channel: .legacy, noise: false)
        let at = t0 + rng.int64(WorldTime.day...2 * WorldTime.day)
        let restored = newTransaction(C.noAds, storefront: user.home, at: at, token: nil, original: made.tx)
        try deliver(restored, channel: .legacy, submitter: user.id, orderID: nil, at: at + rng.int64(2000...9000))
        if k % 2 == 0 {
            try sink.credit(newCredit(for: restored, order: nil, to: user, at: at + rng.int64(10000...20000)))
            try truth(
                truthFor(
                    .restoreNewDevice, "IAP-002", hit: false, tx: restored,
                    note: "restored on a new device by the same user \(user.id)"))
        } else {
            try truth(
                truthFor(
                    .restoreNewDevice, "IAP-014", hit: false, tx: restored,
                    note:
                        "restored on a new device, not granted again: \(user.id) owns it since \(made.tx.transactionID)"
                ))
        }
    }

    func gracePeriodPending() throws {
        try runNormal()
        let at = p.end - rng.int64(WorldTime.hour...18 * WorldTime.hour)
        let made = try buy(C.pack2500, at: at, channel: .jws, credited: false, noise: false)
        try truth(
            truthFor(
                .gracePeriodPending, "IAP-014", hit: false, tx: made.tx, order: made.order,
                note: "bought less than 24 h before the world's end, not yet credited"))
    }

    func refundReversed() throws {
        try runNormal(allowNoAds: false, allowSubscription: false)
        try fillerPurchases()
        let t0 = scenarioTime()
        let made = try buy(C.noAds, at: t0, noise: false)
        let revoked = try refund(made.tx, at: t0 + rng.int64(6 * WorldTime.hour...WorldTime.day))
        let reversedAt = (revoked.revocationDate ?? t0) + rng.int64(6 * WorldTime.hour...WorldTime.day)
        try notify("REFUND_REVERSED", about: made.tx, at: reversedAt)
        try truth(
            truthFor(
                .refundReversed, "IAP-015", hit: false, tx: made.tx, order: made.order,
                note: "REFUND later undone by REFUND_REVERSED; credit kept"))
    }

    /// Makes the user a StoreKit 2 resident of a cheap storefront with a little ordinary activity at home.
    func liveInACheapStorefront(_ k: Int) throws {
        let codes = C.cheapStorefrontCodes
        user.home = C.storefront(codes[k % codes.count])
        user.storeKit2 = true
        try runNormal(minPurchases: 2, allowSubscription: false)
    }

    func nativeCheapStorefront(_ k: Int) throws {
        try liveInACheapStorefront(k)
        let at = scenarioTime()
        let made = try buy(C.pack1200, at: at, channel: .jws, noise: false)
        try truth(
            truthFor(
                .nativeCheapStorefront, "IAP-008", hit: false, tx: made.tx, order: made.order,
                note:
                    "home storefront \(user.home.code), cheap but local (ratio \(UserSimulator.ratioText(UserSimulator.priceRatio(C.pack1200, in: user.home, at: at))))"
            ))
    }

    func forgedJWSBlocked() throws {
        try runNormal()
        let t0 = scenarioTime()
        let forged = newTransaction(C.pack6500, storefront: user.home, at: t0, token: user.token)
        let order = newOrder(for: forged, by: user, status: "failed", channel: .jws)
        try sink.order(order)
        try deliver(
            forged, channel: .jws, submitter: user.id, orderID: order.orderID, at: t0 + rng.int64(2000...40000),
            foreign: true)
        // Still a finding, but informational: the backend already blocked it, no money was lost.
        var t = truthFor(
            .forgedJWSBlocked, "IAP-020", hit: true, tx: forged, order: order,
            note: "JWS from an untrusted root; the backend refused it (no credit)")
        t.level = "informational"
        try truth(t)
    }

    func foreignGenuineRefused() throws {
        try runNormal()
        let (tx, order) = try redeemSisterAppTip(at: scenarioTime(), channel: .jws, credited: false)
        var t = truthFor(
            .foreignGenuineRefused, "IAP-004", hit: false, tx: tx, order: order,
            note: "a genuine \(C.cheapApp.bundleID) signed transaction submitted; the backend refused it (no credit)")
        t.maxLevel = "informational"
        try truth(t)
        try truth(
            truthFor(
                .foreignGenuineRefused, "IAP-020", hit: false, tx: tx, order: order,
                note: "validly signed by Apple for another app: not a forgery attempt"))
    }

    /// A resident of a cheap storefront who travels: one trip abroad, then buys at home again. Buying at home
    /// is never arbitrage, even right after a storefront change.
    func cheapResidentTraveller(_ k: Int) throws {
        try liveInACheapStorefront(k)
        let trip = C.storefront(C.fullPriceStorefrontCodes[k % C.fullPriceStorefrontCodes.count])
        let t0 = scenarioTime(beforeEnd: 6 * WorldTime.day)
        try buy(C.pack550, at: t0, channel: .jws, storefront: trip, userCountry: user.home.code, noise: false)
        let back = t0 + rng.int64(2 * WorldTime.day...4 * WorldTime.day)
        for i in 0..<2 {
            let at = back + Int64(i) * rng.int64(WorldTime.hour...WorldTime.day)
            let made = try buy(
                C.pack2500, at: at, channel: .jws, userCountry: user.home.code, noise: false)
            try truth(
                truthFor(
                    .cheapResidentTraveller, "IAP-008", hit: false, tx: made.tx, order: made.order,
                    note:
                        "resident of \(user.home.code) back from \(trip.code), buying at home (ratio \(UserSimulator.ratioText(UserSimulator.priceRatio(C.pack2500, in: user.home, at: at))))"
                ))
        }
        var t = truthFor(.cheapResidentTraveller, "IAP-009", hit: false, tx: nil)
        t.maxLevel = "informational"
        t.note = "home \(user.home.code) and one trip to \(trip.code): two storefronts"
        try truth(t)
    }

    /// An allow-listed tester switching Sandbox storefronts (as testers and App Review do).
    func sandboxStorefrontTester() throws {
        try runNormal()
        let t0 = scenarioTime(beforeEnd: 8 * WorldTime.day)
        let codes = C.fullPriceStorefrontCodes.filter { $0 != user.home.code }
        for (i, code) in codes.prefix(3).enumerated() {
            let at = t0 + Int64(i) * rng.int64(WorldTime.hour...2 * WorldTime.day)
            let made = try buy(
                C.pack550, at: at, channel: .jws, storefront: C.storefront(code), environment: "Sandbox", noise: false)
            try truth(
                truthFor(
                    .sandboxStorefrontTester, "IAP-017", hit: false, tx: made.tx, order: made.order,
                    note: "Sandbox purchase of an allow-listed tester in \(code)"))
        }
        var t = truthFor(.sandboxStorefrontTester, "IAP-009", hit: false, tx: nil)
        t.maxLevel = "informational"
        t.note = "a tester buying in 3 Sandbox storefronts within days: Sandbox is not counted"
        try truth(t)
    }

    /// One refund of a big pack by a light buyer: a large share of their spend, but a single refund.
    func singleLargeRefund() throws {
        let t0 = scenarioTime(beforeEnd: 6 * WorldTime.day)
        try buy(C.pack100, at: t0 - 2 * WorldTime.day, noise: false)
        try buy(C.pack100, at: t0 - WorldTime.day, noise: false)
        let refundAt = t0 + rng.int64(6 * WorldTime.hour...WorldTime.day)
        let reversedAt = refundAt + rng.int64(WorldTime.hour...6 * WorldTime.hour)
        let made = try buy(
            C.pack6500, at: t0, channel: .jws, noise: false, reversedAt: reversedAt, reversalReason: "refund")
        try refund(made.tx, at: refundAt)
        try truth(
            truthFor(
                .singleLargeRefund, "IAP-016", hit: false, tx: nil,
                note: "one refund of \(C.pack6500.productID), most of this light buyer's spend"))
        try truth(
            truthFor(
                .singleLargeRefund, "IAP-015", hit: false, tx: made.tx, order: made.order,
                note: "refunded, credit reversed within hours"))
    }

    /// A family member whose two shared purchases are revoked when the organiser stops sharing: Apple
    /// revokes them (with a revocation reason), which is never the member's doing.
    func familyRevocations(_ slot: Int) throws {
        try runNormal(allowNoAds: false, allowSubscription: false)
        let member = helper(slot, 0)
        let t0 = scenarioTime(beforeEnd: 6 * WorldTime.day)
        let noAds = try buy(C.noAds, at: t0, channel: .jws, noise: false)
        let plus = try buy(C.plusMonthly, at: t0 + WorldTime.hour, channel: .jws, noise: false)
        let revokeAt = t0 + rng.int64(2 * WorldTime.day...3 * WorldTime.day)
        for (i, bought) in [noAds, plus].enumerated() {
            let at = t0 + Int64(i + 1) * rng.int64(2 * WorldTime.hour...6 * WorldTime.hour)
            let product = i == 0 ? C.noAds : C.plusMonthly
            var shared = newTransaction(
                product, storefront: user.home, at: at, token: nil, original: bought.tx, ownership: "FAMILY_SHARED")
            shared.appTransactionID = UserSimulator.appTransactionID(of: member)
            try deliver(shared, channel: .jws, submitter: member.id, orderID: nil, at: at + rng.int64(2000...30000))
            var credit = newCredit(for: shared, order: nil, to: member, at: at + rng.int64(31000...60000))
            credit.reversedAt = revokeAt + rng.int64(WorldTime.hour...3 * WorldTime.hour)
            credit.reversalReason = "revoke"
            try sink.credit(credit)
            try familyRevoke(shared, at: revokeAt)
            try truth(
                truthFor(
                    .familyRevocations, "IAP-015", hit: false, tx: shared, user: member,
                    note: "family sharing stopped: REVOKE, entitlement reversed within hours"))
        }
        try truth(
            truthFor(
                .familyRevocations, "IAP-016", hit: false, tx: nil, user: member,
                note: "two Family Sharing revocations: the organiser stopped sharing, not the member's refunds"))
    }

    // MARK: one Apple Account, several backend accounts

    /// One Apple Account (the user's device) pays for three backend accounts within days: a reseller or a
    /// multi-accounting farm. The user's account is the owner; the farm is one finding naming the latest account.
    func appleAccountFarm(_ slot: Int) throws {
        try runNormal()
        let accounts = [user, helper(slot, 0), helper(slot, 1)]
        let t0 = scenarioTime(beforeEnd: 4 * WorldTime.day)
        var made: [Made] = []
        for (i, account) in accounts.enumerated() {
            let at = t0 + Int64(i) * rng.int64(WorldTime.hour...WorldTime.day)
            made.append(
                try buy(
                    C.pack550, at: at, channel: .jws, storefront: user.home, buyer: account,
                    userCountry: user.home.code, noise: false, appleAccount: user))
        }
        let id = UserSimulator.appTransactionID(of: user)
        // One finding per Apple Account: it names the account that gained last (by its credit's time, then
        // the larger id); the other is evidence.
        let gained = zip(accounts, made).dropFirst()
        let credited = { (m: Made) in m.credit?.creditedAt ?? m.tx.purchaseDate ?? 0 }
        let latest = gained.max { a, b in
            (credited(a.1), a.0.id) < (credited(b.1), b.0.id)
        }?.0.id
        for (account, purchase) in gained {
            var t = truthFor(
                .appleAccountFarm, "IAP-021", hit: true, tx: purchase.tx, order: purchase.order, user: account,
                note: "\(account.id) credited from Apple Account \(id) of \(user.id) (one Apple Account, 3 accounts)")
            t.inEvidence = account.id != latest
            try truth(t)
        }
    }

    /// The user's device handed to a sibling once: the sibling's new account buys on the same Apple Account
    /// days after the user's own purchase. Two accounts, never a farm.
    func handedOverDevice(_ slot: Int) throws {
        try runNormal()
        let sibling = helper(slot, 0)
        let t0 = scenarioTime(beforeEnd: 6 * WorldTime.day)
        _ = try buy(C.pack550, at: t0, channel: .jws, noise: false)
        let at = t0 + rng.int64(WorldTime.day...3 * WorldTime.day)
        let first = try buy(
            C.pack550, at: at, channel: .jws, storefront: user.home, buyer: sibling, userCountry: user.home.code,
            noise: false, appleAccount: user)
        try truth(
            truthFor(
                .handedOverDevice, "IAP-021", hit: false, tx: first.tx, order: first.order, user: sibling,
                note: "device of \(user.id) handed to \(sibling.id): two accounts on one Apple Account"))
    }

    /// A monthly subscriber who upgrades to the yearly plan days into a period: Apple ends the monthly
    /// transaction early (a signed copy with `isUpgraded`, or a legacy `cancellation_date` with `is_upgraded`)
    /// and the backend, rightly, leaves the monthly credit standing. Not a refund.
    func subscriptionUpgrade(_ k: Int) throws {
        try runNormal(allowSubscription: false)
        let channel: Channel = k % 2 == 0 ? .jws : .legacy
        let start = scenarioTime(beforeEnd: 12 * WorldTime.day)
        let monthly = try subscribe(C.plusMonthly, at: start, until: start + WorldTime.day, channel: channel)
        let upgradeAt = start + rng.int64(3 * WorldTime.day...8 * WorldTime.day)
        var ended = monthly.initial.tx
        ended.revocationDate = upgradeAt
        ended.revocationType = AppleTransaction.upgradeRevocationType
        ended.signedDate = upgradeAt + rng.int64(1000...60000)
        let yearly = try subscribe(C.plusYearly, at: upgradeAt + rng.int64(1000...5000), channel: channel)
        try notify(
            "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE", about: yearly.initial.tx,
            at: yearly.initial.receivedAt + 2000)
        try deliver(
            ended, channel: channel, submitter: user.id, orderID: nil,
            at: upgradeAt + rng.int64(WorldTime.hour...6 * WorldTime.hour))
        try truth(
            truthFor(
                .subscriptionUpgrade, "IAP-015", hit: false, tx: monthly.initial.tx, order: monthly.initial.order,
                note: "monthly upgraded to yearly (\(channel == .jws ? "isUpgraded" : "legacy is_upgraded")): "
                    + "Apple ended it early, no refund; the monthly credit stands"))
    }

    /// A subscription the user shares with the family: Apple gives a family member a FAMILY_SHARED copy and
    /// announces it (SUBSCRIBED), but the member never opens the app, so the backend credits nobody for it.
    /// The copy is access, not a payment; the user's own purchase is credited as usual.
    func familySharedSubscription(_ slot: Int) throws {
        try runNormal(allowSubscription: false)
        let member = helper(slot, 0)
        let start = scenarioTime(beforeEnd: 6 * WorldTime.day)
        let subscription = try subscribe(C.plusMonthly, at: start, until: start + WorldTime.day, channel: .jws)
        let at = start + rng.int64(WorldTime.hour...WorldTime.day)
        var shared = newTransaction(
            C.plusMonthly, storefront: user.home, at: at, token: nil, original: subscription.initial.tx,
            ownership: "FAMILY_SHARED")
        shared.appTransactionID = UserSimulator.appTransactionID(of: member)
        try notify("SUBSCRIBED", subtype: "INITIAL_BUY", about: shared, at: at + rng.int64(5000...60000))
        try truth(
            truthFor(
                .familySharedSubscription, "IAP-014", hit: false, tx: shared, user: member,
                note: "\(C.plusMonthly.productID) of \(user.id) shared with \(member.id), who never opened the app"))
    }

    /// A weekly subscription of the app whose backend credits a subscription once, at its first purchase, and
    /// keeps it by its expiry (DID_RENEW extends it, no credit row): its renewals have no credit of their own,
    /// by design, not by mistake. The first purchase is credited as usual.
    func subscriptionCreditedOnce() throws {
        try runNormal(allowSubscription: false)
        let start = scenarioTime(beforeEnd: 16 * WorldTime.day)
        let subscription = try subscribe(C.proWeekly, at: start, creditRenewals: false)
        for renewal in subscription.renewals {
            try truth(
                truthFor(
                    .subscriptionCreditedOnce, "IAP-014", hit: false, tx: renewal,
                    note:
                        "renewal of \(C.proWeekly.productID), whose backend credits a subscription once (its first purchase, transaction \(subscription.initial.tx.transactionID), is credited)"
                ))
        }
    }

    /// A subscriber who signs up again (a second account, e.g. through Sign in with Apple) and restores the
    /// weekly subscription there before its first renewal: from then on the backend credits the renewals to
    /// the new account, which is the subscription's only holder. The renewals keep the original purchase's
    /// token (StoreKit 2) and original transaction id. Even cases StoreKit 2, odd cases a legacy receipt.
    func subscriptionMovedAccount(_ k: Int, _ slot: Int) throws {
        try runNormal(allowSubscription: false)
        let newAccount = helper(slot, 0)
        let channel: Channel = k % 2 == 0 ? .jws : .legacy
        let start = scenarioTime(beforeEnd: 16 * WorldTime.day)
        let subscription = try subscribe(C.plusWeekly, at: start, channel: channel, creditRenewals: false)
        let restoreAt = start + rng.int64(WorldTime.day...5 * WorldTime.day)
        _ = try deliver(
            subscription.initial.tx, channel: channel, submitter: newAccount.id, orderID: nil, at: restoreAt)
        for renewal in subscription.renewals {
            let at = (renewal.purchaseDate ?? restoreAt) + rng.int64(130_000...300_000)
            guard at < p.end else { break }
            try sink.credit(newCredit(for: renewal, order: nil, to: newAccount, at: at))
        }
        guard let first = subscription.renewals.first else { return }
        let note =
            "\(C.plusWeekly.productID) of \(user.id) restored on \(newAccount.id) before its first renewal; "
            + "the renewals are credited to \(newAccount.id) only"
        try truth(truthFor(.subscriptionMovedAccount, "IAP-013", hit: false, tx: first, user: newAccount, note: note))
        if channel == .jws {
            try truth(
                truthFor(
                    .subscriptionMovedAccount, "IAP-012", hit: false, tx: first, user: newAccount, primary: false,
                    note: note))
        }
    }

    /// A monthly subscription Apple refunds in part (REFUND_PRORATED: the unused share of the period). The
    /// backend keeps the days the customer used: even cases edit the one ledger row down in place, odd cases
    /// reverse it and write a row of the kept days.
    func proratedRefundKeptShare(_ k: Int) throws {
        try runNormal(allowSubscription: false)
        let start = scenarioTime(beforeEnd: 20 * WorldTime.day)
        let units = C.plusMonthly.units
        let refundAt = start + rng.int64(8 * WorldTime.day...16 * WorldTime.day)
        let period = Int64(C.plusMonthly.periodDays) * WorldTime.day
        // Apple's percentage is the unused share; the backend keeps the days used, a part day counted as a whole
        // one for half of these customers (IAP-015 allows it) and dropped for the others.
        let share = max(1, min(99_999, (start + period - refundAt) * 100_000 / period))
        let used = units * (100_000 - share)
        let kept = (k / 3) % 2 == 0 ? (used + 99_999) / 100_000 : used / 100_000
        let clawedAt = refundAt + rng.int64(WorldTime.hour...6 * WorldTime.hour)
        // 0: the row edited down; 1: the grant reversed and a row of the kept days; 2: an append-only ledger's
        // row of negative units for the refunded days, the grant left as it was.
        let style = k % 3
        let made = try buy(
            C.plusMonthly, at: start, channel: .jws, noise: false, creditUnits: style == 0 ? kept : nil,
            reversedAt: style == 1 ? clawedAt : nil, reversalReason: style == 1 ? "refund" : nil)
        try notify("SUBSCRIBED", subtype: "INITIAL_BUY", about: made.tx, at: made.receivedAt + 3000)
        try refund(made.tx, at: refundAt, percentage: share)
        if style != 0, clawedAt < p.end {
            var row = newCredit(
                for: made.tx, order: made.order, to: user, at: clawedAt, units: style == 1 ? kept : kept - units)
            if style == 2 { row.reversalReason = "refund" }
            try sink.credit(row)
        }
        let how = [
            "by editing its row down", "in a new row after reversing the grant",
            "by a ledger row taking back \(units - kept) days",
        ][style]
        try truth(
            truthFor(
                .proratedRefundKeptShare, "IAP-015", hit: false, tx: made.tx, order: made.order,
                note: "prorated refund of \(share / 1000) %; the backend keeps \(kept) of \(units) days " + how))
    }

    /// A weekly subscriber whose renewal charge fails in an app with Billing Grace Period on: Apple keeps them
    /// entitled for the grace days (DID_FAIL_TO_RENEW / GRACE_PERIOD with `gracePeriodExpiresDate`) and the
    /// backend, keeping a ledger of days, credits those days as a second row of the last paid transaction.
    /// Billing never recovers (GRACE_PERIOD_EXPIRED). Grace lengths alternate between 3 and 6 days.
    func gracePeriodDaysCredited(_ k: Int) throws {
        try runNormal(allowSubscription: false)
        let start = scenarioTime(beforeEnd: 20 * WorldTime.day)
        let subscription = try subscribe(C.plusWeekly, at: start, until: start + WorldTime.day, channel: .jws)
        var last = subscription.initial.tx
        last.expiresDate = last.expiresDate ?? (start + 7 * WorldTime.day)
        guard let expires = last.expiresDate else { return }
        let graceDays: Int64 = k % 2 == 0 ? 3 : 6
        let graceEnds = expires + graceDays * WorldTime.day
        let failedAt = expires + rng.int64(30_000...600_000)
        try notify(
            "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", about: last, at: failedAt,
            gracePeriodExpires: graceEnds)
        let creditAt = failedAt + rng.int64(500...3000)
        guard creditAt < p.end else { return }
        try sink.credit(
            newCredit(for: last, order: subscription.initial.order, to: user, at: creditAt, units: graceDays))
        try notify(
            "GRACE_PERIOD_EXPIRED", about: last, at: graceEnds + rng.int64(30_000...600_000), autoRenew: false,
            gracePeriodExpires: graceEnds)
        let note =
            "renewal failed; \(graceDays) Billing Grace Period days credited as a second row of the last paid period"
        try truth(
            truthFor(
                .gracePeriodDaysCredited, "IAP-001", hit: false, tx: last, order: subscription.initial.order,
                note: note))
        try truth(
            truthFor(
                .gracePeriodDaysCredited, "IAP-019", hit: false, tx: last, order: subscription.initial.order,
                primary: false, note: note))
    }

    /// A refund farm spread over backend accounts: the user's Apple Account buys a big pack in the user's
    /// account and in two new accounts days apart, and asks Apple to refund each a day or two later (the
    /// backend claws the coins back, spent or not). One refund per backend account, three for the payer: one
    /// finding, under the account of the latest refund; the other two are evidence.
    func refundFarmAccounts(_ slot: Int) throws {
        try runNormal(allowSubscription: false)
        let accounts = [user, helper(slot, 0), helper(slot, 1)]
        let t0 = scenarioTime(beforeEnd: 13 * WorldTime.day)
        var refunds: [(account: UserProfile, made: Made, at: Int64)] = []
        for (i, account) in accounts.enumerated() {
            let at = t0 + Int64(i) * rng.int64(3 * WorldTime.day...4 * WorldTime.day)
            let refundAt = at + rng.int64(20 * WorldTime.hour...44 * WorldTime.hour)
            let made = try buy(
                C.pack6500, at: at, channel: .jws, storefront: user.home, buyer: account,
                userCountry: user.home.code, noise: false,
                reversedAt: refundAt + rng.int64(WorldTime.hour...6 * WorldTime.hour), reversalReason: "refund",
                appleAccount: user)
            try refund(made.tx, at: refundAt)
            refunds.append((account, made, refundAt))
        }
        let id = UserSimulator.appTransactionID(of: user)
        guard let latest = refunds.max(by: { $0.at < $1.at }) else { return }
        for r in refunds {
            var t = truthFor(
                .refundFarmAccounts, "IAP-016", hit: true, tx: r.made.tx, order: r.made.order, user: r.account,
                note: "Apple Account \(id) of \(user.id): 3 refunds within days, one in each of 3 backend accounts")
            t.inEvidence = r.account.id != latest.account.id
            try truth(t)
        }
    }

    /// A resident of a cheap storefront who moved to a full-price country: bought at home until the move (the
    /// orders say the old country), then in the new country's storefront; the accounts source now says the new
    /// country. The old purchases were made at home.
    func movedOutOfCheapCountry(_ k: Int) throws {
        let oldHome = C.storefront(C.cheapStorefrontCodes[k % C.cheapStorefrontCodes.count])
        let newHome = C.storefront(C.fullPriceStorefrontCodes[k % C.fullPriceStorefrontCodes.count])
        user.home = oldHome
        user.storeKit2 = true
        let moveAt = p.start + (p.end - p.start) / 2
        var before: [Made] = []
        for at in randomTimes(2, to: moveAt - WorldTime.day) {
            before.append(try buy(C.pack1200, at: at, channel: .jws, userCountry: oldHome.code, noise: false))
        }
        for at in randomTimes(2, from: moveAt + WorldTime.day, to: p.end - 2 * WorldTime.hour) {
            try buy(C.pack550, at: at, channel: .jws, storefront: newHome, userCountry: newHome.code, noise: false)
        }
        // The account is written after the simulation with the user's final home.
        user.home = newHome
        for made in before {
            try truth(
                truthFor(
                    .movedOutOfCheapCountry, "IAP-008", hit: false, tx: made.tx, order: made.order,
                    note:
                        "bought at home in \(oldHome.code) before moving to \(newHome.code), which the account now says"
                ))
        }
        var t = truthFor(.movedOutOfCheapCountry, "IAP-009", hit: false, tx: nil)
        t.maxLevel = "informational"
        t.note = "moved from \(oldHome.code) to \(newHome.code): two storefronts"
        try truth(t)
    }

    /// A StoreKit 1 backend bug: the receipt lists an older purchase of the user first, and the backend credits
    /// the receipt's first in_app entry on today's order. The older purchase is credited a second time and
    /// today's is never credited.
    func firstEntryCredited() throws {
        try runNormal(allowNoAds: false, allowSubscription: false)
        let t0 = scenarioTime(minAfterStart: 4 * WorldTime.day)
        let older = try buy(
            C.pack2500, at: t0 - rng.int64(2 * WorldTime.day...3 * WorldTime.day), channel: .legacy, noise: false)
        let tx = newTransaction(C.pack550, storefront: user.home, at: t0, token: nil)
        sink.countPurchase()
        let order = newOrder(for: tx, by: user, status: "credited", channel: .legacy)
        try sink.order(order)
        let receivedAt = t0 + rng.int64(2000...40000)
        try writeLegacy(
            [ApplePayloadEncoder.legacyEntry(older.tx), ApplePayloadEncoder.legacyEntry(tx)],
            app: UserSimulator.app(forBundle: tx.bundleID), submitter: user.id, orderID: order.orderID,
            receivedAt: receivedAt, receiptData: newReceiptData())
        try sink.credit(newCredit(for: older.tx, order: order, to: user, at: receivedAt + rng.int64(200...3000)))
        try truth(
            truthFor(
                .firstEntryCredited, "IAP-014", hit: true, tx: tx, order: order,
                note: "never credited: the backend credited the receipt's first entry \(older.tx.transactionID) instead"
            ))
        try truth(
            truthFor(
                .firstEntryCredited, "IAP-001", hit: true, tx: older.tx, order: older.order,
                note: "credited again on order \(order.orderID) for today's \(tx.transactionID)"))
    }

    /// An order whose payment failed (or was cancelled) credited anyway: no Apple transaction anywhere, the
    /// credit names only the order (IAP-022 hit).
    func unpaidOrderCredited(_ k: Int) throws {
        try runNormal()
        let t0 = scenarioTime()
        let channel: Channel = k % 2 == 0 ? .jws : .legacy
        // The purchase the order was for; Apple never charged it, so nothing of it is ever delivered.
        let attempt = newTransaction(
            C.pack2500, storefront: user.home, at: t0, token: channel == .jws ? user.token : nil)
        let status = k % 2 == 0 ? "failed" : "cancelled"
        var order = newOrder(for: attempt, by: user, status: status, channel: channel)
        order.transactionID = nil
        try sink.order(order)
        var credit = newCredit(for: attempt, order: order, to: user, at: t0 + rng.int64(3000...60000))
        credit.transactionID = nil
        try sink.credit(credit)
        var t = truthFor(
            .unpaidOrderCredited, "IAP-022", hit: true, tx: nil, order: order,
            note: "order \(status), no Apple transaction, \(C.pack2500.productID) credited on the order")
        t.productID = C.pack2500.productID
        t.level = "high"
        try truth(t)
    }

    /// Failed orders that are not unpaid credits (IAP-022 no-hit): a payment declined and retried on a new
    /// order that Apple charged and the backend credited, beside a support grant with neither order nor
    /// transaction; or an order the backend marked failed (a timeout) although Apple charged it, credited
    /// under the transaction.
    func failedOrderRetried(_ k: Int) throws {
        try runNormal()
        let t0 = scenarioTime()
        if k % 2 == 0 {
            let attempt = newTransaction(C.pack1200, storefront: user.home, at: t0, token: user.token)
            var declined = newOrder(for: attempt, by: user, status: "failed", channel: .jws)
            declined.transactionID = nil
            try sink.order(declined)
            let retry = try buy(C.pack1200, at: t0 + rng.int64(60000...600_000), channel: .jws, noise: false)
            var grant = Credit(creditID: nextCreditID())
            grant.userID = user.id
            grant.productID = C.pack100.productID
            grant.units = C.pack100.units
            grant.creditedAt = t0 + rng.int64(WorldTime.hour...6 * WorldTime.hour)
            try sink.credit(grant)
            try truth(
                truthFor(
                    .failedOrderRetried, "IAP-022", hit: false, tx: nil, order: declined,
                    note:
                        "declined, retried on order \(retry.order?.orderID ?? "?") (paid, credited); a goodwill grant without order"
                ))
            return
        }
        let tx = newTransaction(C.pack1200, storefront: user.home, at: t0, token: user.token)
        sink.countPurchase()
        let order = newOrder(for: tx, by: user, status: "failed", channel: .jws)
        try sink.order(order)
        let at = t0 + rng.int64(2000...40000)
        try deliver(tx, channel: .jws, submitter: user.id, orderID: order.orderID, at: at)
        try sink.credit(newCredit(for: tx, order: order, to: user, at: at + rng.int64(500...3000)))
        try truth(
            truthFor(
                .failedOrderRetried, "IAP-022", hit: false, tx: tx, order: order,
                note: "order marked failed after a timeout; Apple charged and the credit names the transaction"))
    }

    /// An App Store price rise the app's cached price list has not caught up with: the user buys `pack1200`
    /// at the old price, and hours later again, when Apple charges the new one (about 10 % more, rounded to the
    /// currency's unit) while the paywall still shows and logs the old. Both signed. Not a tampered price.
    func stalePriceList(_ k: Int) throws {
        try runNormal()
        let t0 = scenarioTime()
        let first = try buy(C.pack1200, at: t0, channel: .jws)
        let oldPrice = C.localPrice(C.pack1200, in: user.home)
        let unit: Int64 = user.home.minorDigits == 0 ? 1000 : 10
        let newPrice = (oldPrice * 11 / 10 + unit - 1) / unit * unit
        let t1 = t0 + rng.int64(WorldTime.hour...20 * WorldTime.hour)
        var tx = newTransaction(C.pack1200, storefront: user.home, at: t1, token: user.token)
        tx.appTransactionID = UserSimulator.appTransactionID(of: user)
        tx.price = newPrice
        sink.countPurchase()
        var order = newOrder(for: tx, by: user, status: "credited", channel: .jws)
        order.price = oldPrice
        order.currency = user.home.currency
        try sink.order(order)
        let at = t1 + rng.int64(2000...40000)
        guard at < p.end else { return }
        try deliver(tx, channel: .jws, submitter: user.id, orderID: order.orderID, at: at)
        try sink.credit(newCredit(for: tx, order: order, to: user, at: at + rng.int64(200...3000)))
        let shown = C.decimalText(milli: oldPrice, minorDigits: user.home.minorDigits) + " " + user.home.currency
        let charged = C.decimalText(milli: newPrice, minorDigits: user.home.minorDigits) + " " + user.home.currency
        try truth(
            truthFor(
                .stalePriceList, "IAP-010", hit: false, tx: tx, order: order,
                note:
                    "displayed \(shown), Apple charged \(charged) after a price rise; transaction \(first.tx.transactionID) was charged \(shown) hours before"
            ))
    }

    /// A weekly subscription whose backend ends each period's entitlement by reversing its credit row, from a
    /// job whose clock runs a few minutes ahead of Apple's: every row reversed 1–10 minutes before the period
    /// expires. Signed in even cases, a legacy receipt in odd ones. Every period was credited for all of it.
    func expiryClockSkew(_ k: Int) throws {
        try runNormal(allowSubscription: false)
        let start = scenarioTime(beforeEnd: 16 * WorldTime.day)
        let product = C.plusWeekly
        let period = Int64(product.periodDays) * WorldTime.day
        let until = start + 2 * period + WorldTime.day
        let skew = { self.rng.int64(WorldTime.minute...10 * WorldTime.minute) }
        let initial = try buy(
            product, at: start, channel: k % 2 == 0 ? .jws : .legacy, reversedAt: start + period - skew(),
            reversalReason: "expired")
        try notify(
            "SUBSCRIBED", subtype: "INITIAL_BUY", about: initial.tx, at: initial.receivedAt + rng.int64(1000...20000))
        let renewals = try renew(from: initial.tx, until: until, credit: false)
        for renewal in renewals {
            guard let expires = renewal.expiresDate, let purchased = renewal.purchaseDate else { continue }
            let creditAt = purchased + rng.int64(20000...120_000)
            guard creditAt < p.end else { continue }
            var credit = newCredit(for: renewal, order: nil, to: user, at: creditAt)
            let reversedAt = expires - skew()
            if reversedAt < p.end {
                credit.reversedAt = reversedAt
                credit.reversalReason = "expired"
            }
            try sink.credit(credit)
        }
        for (i, tx) in ([initial.tx] + renewals).enumerated() {
            try truth(
                truthFor(
                    .expiryClockSkew, "IAP-014", hit: false, tx: tx, order: i == 0 ? initial.order : nil,
                    note: "each period's credit reversed 1–10 minutes before Apple's expiry (the backend's clock ahead)"
                ))
        }
    }

    /// A first-purchase promotion's bonus, written once beside the purchase's row as it should be, then written
    /// again on two later days (a replayed grant request): the purchase credited three more times. Even cases
    /// name the promotion's item, odd cases write the bonus without an item.
    func bonusReplayed(_ k: Int) throws {
        try runNormal()
        let t0 = scenarioTime(beforeEnd: 4 * WorldTime.day)
        let made = try buy(C.pack2500, at: t0, channel: k % 4 < 2 ? .jws : .legacy, noise: false)
        guard let credit = made.credit, let creditedAt = credit.creditedAt else { return }
        let bonus = C.pack2500.units / 10
        let times =
            [creditedAt + rng.int64(200...2000)]
            + [1, 2].map { day in creditedAt + day * WorldTime.day + rng.int64(0...WorldTime.hour) }
        for at in times where at < p.end {
            var row = newCredit(for: made.tx, order: made.order, to: user, at: at, units: bonus)
            row.productID = k % 2 == 0 ? "promo.first_purchase_bonus" : nil
            try sink.credit(row)
        }
        try truth(
            truthFor(
                .bonusReplayed, "IAP-001", hit: true, tx: made.tx, order: made.order,
                note:
                    "a \(bonus)-unit first-purchase bonus \(k % 2 == 0 ? "row" : "row without an item") written three times, on three days"
            ))
    }

    /// A weekly subscriber who forgot to cancel asks Apple to refund the last two renewals; Apple decides the
    /// request period by period, on two consecutive days, and the backend reverses each credit within hours.
    /// One request, not a refund habit; nothing refunded stays credited.
    func forgottenSubscriptionRefunds() throws {
        try runNormal(allowSubscription: false)
        let start = scenarioTime(beforeEnd: 30 * WorldTime.day)
        let product = C.plusWeekly
        let period = Int64(product.periodDays) * WorldTime.day
        let subscription = try subscribe(
            product, at: start, until: start + 3 * period + WorldTime.hour, channel: .jws, creditRenewals: false)
        let renewals = subscription.renewals
        guard renewals.count >= 2 else { return }
        let refunded = renewals.suffix(2)
        var refundAt = (renewals.last?.expiresDate ?? start + 4 * period) + rng.int64(WorldTime.hour...WorldTime.day)
        var refundTimes: [String: Int64] = [:]
        for tx in refunded {
            refundTimes[tx.transactionID] = refundAt
            refundAt += rng.int64(18 * WorldTime.hour...30 * WorldTime.hour)
        }
        for tx in renewals {
            guard let purchased = tx.purchaseDate else { continue }
            let creditAt = purchased + rng.int64(20000...120_000)
            guard creditAt < p.end else { continue }
            var credit = newCredit(for: tx, order: nil, to: user, at: creditAt)
            if let at = refundTimes[tx.transactionID] {
                let reversedAt = at + rng.int64(WorldTime.hour...6 * WorldTime.hour)
                if reversedAt < p.end {
                    credit.reversedAt = reversedAt
                    credit.reversalReason = "refund"
                }
            }
            try sink.credit(credit)
        }
        for tx in refunded {
            guard let at = refundTimes[tx.transactionID] else { continue }
            try refund(tx, at: at)
        }
        let note =
            "forgot to cancel: the last two renewals refunded on consecutive days (one request), credits reversed"
        try truth(truthFor(.forgottenSubscriptionRefunds, "IAP-016", hit: false, tx: nil, user: user, note: note))
        for tx in refunded {
            try truth(
                truthFor(.forgottenSubscriptionRefunds, "IAP-015", hit: false, tx: tx, primary: false, note: note))
        }
    }
}
