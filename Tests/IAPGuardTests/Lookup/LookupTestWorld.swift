import Foundation

@testable import IAPGuard

/// A small store built through the store's write API with one case per verdict (and the benign look-alikes),
/// the shipped rules run over it so findings exist. Judged at ``now``.
struct LookupTestWorld {
    static let day: Int64 = 86_400_000
    static let hour: Int64 = 3_600_000
    /// 2026-03-01T00:00:00Z.
    static let now: Int64 = 1_772_323_200_000
    static let bundle = "com.example.coins"
    static let pack100 = "com.example.coins.pack100"
    static let noAds = "com.example.coins.noads"
    static let monthly = "com.example.coins.plus.monthly"
    /// The monthly plan's higher plan in the same subscription group.
    static let yearly = "com.example.coins.plus.yearly"
    /// A catalog product named outside the bundle's namespace, as Apple allows.
    static let gems = "gems_1000"
    /// A tip jar: the catalog credits 0 units for it.
    static let tip = "com.example.coins.tip"

    let directory: URL
    let storePath: String
    let store: SQLiteStore
    private var batch = IngestBatch()
    private var payloadCounter = 0

    init() throws {
        directory = TestScratch.root.appendingPathComponent(
            "iapguard-lookup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        storePath = directory.appendingPathComponent("store.sqlite").path
        store = try SQLiteStore(path: storePath)
        try store.migrate()
    }

    /// Builds the standard world: every case below, then the rules.
    static func standard() throws -> LookupTestWorld {
        var w = try LookupTestWorld()
        let n = now
        // paid-and-credited
        w.purchase(
            "1000000000000001", user: "u-ok", order: "o-ok", at: n - 10 * day,
            token: "AAAAAAAA-0000-4000-8000-000000000001")
        w.credit("c-ok", tx: "1000000000000001", order: "o-ok", user: "u-ok", at: n - 10 * day + 60_000)
        // missing-credit and pending-credit
        w.purchase("1000000000000002", user: "u-miss", order: "o-miss", at: n - 5 * day)
        w.purchase("1000000000000003", user: "u-pend", order: "o-pend", at: n - 2 * hour)
        // mis-credit: u-payer's order, u-other credited
        w.purchase("1000000000000004", user: "u-payer", order: "o-mis", at: n - 4 * day)
        w.credit("c-mis", tx: "1000000000000004", order: "o-mis", user: "u-other", at: n - 4 * day + 90_000)
        // replayed: one transaction, two orders, two standing credits
        w.purchase("1000000000000005", user: "u-rep", order: "o-rep1", at: n - 6 * day, legacy: true)
        w.order("o-rep2", user: "u-rep", tx: "1000000000000005", product: pack100, at: n - 5 * day)
        w.credit("c-rep1", tx: "1000000000000005", order: "o-rep1", user: "u-rep", at: n - 6 * day + 60_000)
        w.credit("c-rep2", tx: "1000000000000005", order: "o-rep2", user: "u-rep", at: n - 5 * day + 60_000)
        // charged twice: two transactions 5 minutes apart, each credited once
        w.purchase("1000000000000006", user: "u-twice", order: "o-tw1", at: n - 3 * day)
        w.credit("c-tw1", tx: "1000000000000006", order: "o-tw1", user: "u-twice", at: n - 3 * day + 30_000)
        w.purchase("1000000000000007", user: "u-twice", order: "o-tw2", at: n - 3 * day + 300_000)
        w.credit("c-tw2", tx: "1000000000000007", order: "o-tw2", user: "u-twice", at: n - 3 * day + 330_000)
        // refunded and clawed back; refunded and still credited
        w.purchase("1000000000000008", user: "u-refund", order: "o-ref", at: n - 8 * day, revokedAt: n - 3 * day)
        w.credit(
            "c-ref", tx: "1000000000000008", order: "o-ref", user: "u-refund", at: n - 8 * day + 60_000,
            reversedAt: n - 3 * day + hour, reason: "refund")
        w.notification("n-ref", type: "REFUND", tx: "1000000000000008", at: n - 3 * day, revokedAt: n - 3 * day)
        w.purchase("1000000000000009", user: "u-keep", order: "o-keep", at: n - 9 * day, revokedAt: n - 5 * day)
        w.credit("c-keep", tx: "1000000000000009", order: "o-keep", user: "u-keep", at: n - 9 * day + 60_000)
        w.notification("n-keep", type: "REFUND", tx: "1000000000000009", at: n - 5 * day, revokedAt: n - 5 * day)
        // sandbox: to a non-tester, and to a tester
        w.purchase("1000000000000010", user: "u-sand", order: "o-sand", at: n - 2 * day, environment: "Sandbox")
        w.credit("c-sand", tx: "1000000000000010", order: "o-sand", user: "u-sand", at: n - 2 * day + 60_000)
        w.purchase("1000000000000011", user: "qa-1", order: "o-qa", at: n - 2 * day, environment: "Sandbox")
        w.credit("c-qa", tx: "1000000000000011", order: "o-qa", user: "qa-1", at: n - 2 * day + 60_000)
        // forged: a urus marker in a legacy receipt, and a JWS whose every copy failed verification
        w.purchase("com.urus.iap.fake1", user: "u-forge", order: "o-forge", at: n - 2 * day, legacy: true)
        w.credit("c-forge", tx: "com.urus.iap.fake1", order: "o-forge", user: "u-forge", at: n - 2 * day + 60_000)
        w.purchase("1000000000000012", user: "u-forge2", order: "o-forge2", at: n - 2 * day, failed: true)
        w.credit("c-forge2", tx: "1000000000000012", order: "o-forge2", user: "u-forge2", at: n - 2 * day + 60_000)
        // unverifiable: credited, Apple never confirmed
        w.order("o-unconf", user: "u-unconf", tx: "1000000000000013", product: pack100, at: n - 2 * day)
        w.credit("c-unconf", tx: "1000000000000013", order: "o-unconf", user: "u-unconf", at: n - 2 * day + 60_000)
        // order not paid
        w.order("o-nopay", user: "u-ok", tx: nil, product: pack100, at: n - day, status: "created")
        // family sharing look-alike
        w.purchase("1000000000000020", user: "u-org", order: "o-fam", at: n - 7 * day, product: noAds)
        w.credit(
            "c-fam", tx: "1000000000000020", order: "o-fam", user: "u-org", at: n - 7 * day + 60_000, product: noAds,
            units: 1)
        w.purchase(
            "1000000000000021", user: "u-member", order: nil, at: n - 6 * day, product: noAds,
            original: "1000000000000020", ownership: "FAMILY_SHARED")
        w.credit(
            "c-member", tx: "1000000000000021", order: nil, user: "u-member", at: n - 6 * day + 60_000, product: noAds,
            units: 1)
        // subscription renewal look-alike
        w.purchase(
            "1000000000000030", user: "u-sub", order: "o-sub", at: n - 40 * day, product: monthly,
            token: "BBBBBBBB-0000-4000-8000-000000000002")
        w.credit(
            "c-sub1", tx: "1000000000000030", order: "o-sub", user: "u-sub", at: n - 40 * day + 60_000,
            product: monthly, units: 1)
        w.purchase(
            "1000000000000031", user: nil, order: nil, at: n - 10 * day, product: monthly, original: "1000000000000030",
            token: "BBBBBBBB-0000-4000-8000-000000000002", reason: "RENEWAL")
        w.credit(
            "c-sub2", tx: "1000000000000031", order: nil, user: "u-sub", at: n - 10 * day + 60_000, product: monthly,
            units: 1)
        // restore on a new device by the same user (look-alike), and onto another account (mis-credit)
        w.purchase("1000000000000040", user: "u-rest", order: "o-rest", at: n - 9 * day, product: noAds, legacy: true)
        w.credit(
            "c-rest1", tx: "1000000000000040", order: "o-rest", user: "u-rest", at: n - 9 * day + 60_000,
            product: noAds, units: 1)
        w.purchase(
            "1000000000000041", user: "u-rest", order: nil, at: n - 8 * day, product: noAds,
            original: "1000000000000040", legacy: true)
        w.credit(
            "c-rest2", tx: "1000000000000041", order: nil, user: "u-rest", at: n - 8 * day + 60_000, product: noAds,
            units: 1)
        w.purchase("1000000000000050", user: "u-a", order: "o-a", at: n - 9 * day, product: noAds, legacy: true)
        w.credit(
            "c-a", tx: "1000000000000050", order: "o-a", user: "u-a", at: n - 9 * day + 60_000, product: noAds, units: 1
        )
        w.purchase(
            "1000000000000051", user: "u-b", order: nil, at: n - 8 * day, product: noAds, original: "1000000000000050",
            legacy: true)
        w.credit(
            "c-b", tx: "1000000000000051", order: nil, user: "u-b", at: n - 8 * day + 60_000, product: noAds, units: 1)
        // a consumption request where the backend tracks spending: 40 of 100 coins spent before Apple asked
        w.purchase(
            "1000000000000070", user: "u-half", order: "o-half", at: n - 4 * day,
            token: "DDDDDDDD-0000-4000-8000-000000000004")
        w.credit(
            "c-half", tx: "1000000000000070", order: "o-half", user: "u-half", at: n - 4 * day + 60_000,
            consumed: (40, n - 3 * day))
        w.notification(
            "n-half", type: "CONSUMPTION_REQUEST", tx: "1000000000000070", at: n - 2 * day,
            reason: "UNINTENDED_PURCHASE")
        // a consumption request on a consumable of a customer with two recent refunds
        w.purchase(
            "1000000000000060", user: "u-cons", order: "o-cons", at: n - 4 * day, storefront: "TUR", currency: "TRY",
            price: 39_990, token: "CCCCCCCC-0000-4000-8000-000000000003")
        w.credit("c-cons", tx: "1000000000000060", order: "o-cons", user: "u-cons", at: n - 4 * day + 60_000)
        w.notification(
            "n-cons", type: "CONSUMPTION_REQUEST", tx: "1000000000000060", at: n - 2 * day,
            reason: "UNINTENDED_PURCHASE")
        for (i, tx) in ["1000000000000061", "1000000000000062"].enumerated() {
            let at = n - Int64(30 + 10 * i) * day
            w.purchase(
                tx, user: "u-cons", order: "o-cons-\(i)", at: at, storefront: "TUR", currency: "TRY", price: 39_990,
                revokedAt: at + day)
            w.credit(
                "c-cons-\(i)", tx: tx, order: "o-cons-\(i)", user: "u-cons", at: at + 60_000,
                reversedAt: at + day + hour, reason: "refund")
            w.notification("n-cons-\(i)", type: "REFUND", tx: tx, at: at + day, revokedAt: at + day)
        }
        // a genuine Apple payload of another app, refused for its bundle, credited anyway
        w.purchase(
            "1000000000000090", user: "u-foreign", order: "o-foreign", at: n - 2 * day, bundle: "com.cheap.app",
            outcome: .failed(.wrongBundle, "bundleId 'com.cheap.app' is not a configured app"))
        w.credit("c-foreign", tx: "1000000000000090", order: "o-foreign", user: "u-foreign", at: n - 2 * day + 60_000)
        // a credited product that is not in the app's catalog (IAP-006)
        w.purchase(
            "1000000000000091", user: "u-retired", order: "o-retired", at: n - 3 * day,
            product: "com.example.coins.retired")
        w.credit("c-retired", tx: "1000000000000091", order: "o-retired", user: "u-retired", at: n - 3 * day + 60_000)
        try w.commit(runRules: true)
        return w
    }

    // MARK: Builders

    mutating func purchase(
        _ tx: String, user: String?, order: String?, at: Int64, product: String = pack100, original: String? = nil,
        environment: String = "Production", storefront: String = "USA", currency: String = "USD",
        price: Int64 = 990, token: String? = nil, ownership: String = "PURCHASED", reason: String? = "PURCHASE",
        revokedAt: Int64? = nil, upgradedAt: Int64? = nil, legacy: Bool = false, failed: Bool = false,
        bundle: String = bundle, outcome: VerificationOutcome? = nil, anomalies: [String] = [],
        quantity: Int64 = 1, expires: Int64? = nil, appleAccount: String? = nil, submittedBy: String? = nil,
        applePrice: Bool = true, refundedShare: Int64? = nil
    ) {
        var t = AppleTransaction(transactionID: tx)
        t.appTransactionID = appleAccount
        t.originalTransactionID = original ?? tx
        t.bundleID = bundle
        t.productID = product
        t.type =
            product == Self.noAds
            ? "Non-Consumable" : (product == Self.monthly ? "Auto-Renewable Subscription" : "Consumable")
        t.quantity = quantity
        t.purchaseDate = at
        t.expiresDate = expires
        t.originalPurchaseDate = at
        t.environment = environment
        t.storefront = storefront
        // (a legacy receipt carries no price: `applePrice: false`)
        t.currency = applePrice ? currency : nil
        t.price = applePrice ? price : nil
        t.appAccountToken = token
        t.inAppOwnershipType = ownership
        t.transactionReason = reason
        t.signedDate = at + 1000
        if let revokedAt {
            t.revocationDate = revokedAt
            t.revocationReason = 0
            t.revocationType = "REFUND_FULL"
            if let refundedShare {
                t.revocationType = "REFUND_PRORATED"
                t.revocationPercentage = refundedShare
            }
        }
        if let upgradedAt {
            t.revocationDate = upgradedAt
            t.revocationType = AppleTransaction.upgradeRevocationType
        }
        payloadCounter += 1
        var sighting = AppleSighting(
            transaction: t, sourceKind: legacy ? .receipt : .jws, sourceName: legacy ? "receipts" : "signed",
            sourceRef: "data/\(legacy ? "receipts" : "transactions").jsonl:\(payloadCounter)",
            payloadHash: "hash-\(payloadCounter)",
            verification: outcome
                ?? (failed
                    ? .failed(.chainUntrusted, "the chain does not lead to a trusted root")
                    : (legacy ? VerificationOutcome(status: .notSigned, reason: "status-0") : .verified)))
        sighting.submittedByUserID = submittedBy ?? user
        sighting.submittedOrderID = order
        sighting.receivedAt = at + 2000
        sighting.receiptKey = "key-\(payloadCounter)"
        if tx.hasPrefix("com.urus") { sighting.anomalies = ["non-numeric-id"] }
        sighting.anomalies += anomalies
        batch.sightings.append(sighting)
        if let order, let user {
            self.order(order, user: user, tx: tx, product: product, at: at - 5000, token: token, storefront: storefront)
        }
    }

    /// Another copy of transaction `tx` (already added by ``purchase``), received at `at` and signed a second
    /// before, as `change` makes it (Apple's later copy of the same transaction, say with a new token).
    mutating func copy(of tx: String, receivedAt at: Int64, change: (inout AppleTransaction) -> Void) {
        guard var sighting = batch.sightings.first(where: { $0.transaction.transactionID == tx }) else { return }
        payloadCounter += 1
        change(&sighting.transaction)
        sighting.transaction.signedDate = at - 1000
        sighting.sourceRef = "data/transactions.jsonl:\(payloadCounter)"
        sighting.payloadHash = "hash-\(payloadCounter)"
        sighting.receiptKey = "key-\(payloadCounter)"
        sighting.submittedByUserID = nil
        sighting.submittedOrderID = nil
        sighting.receivedAt = at
        batch.sightings.append(sighting)
    }

    mutating func order(
        _ id: String, user: String, tx: String?, product: String, at: Int64, status: String = "credited",
        token: String? = nil, storefront: String = "USA"
    ) {
        var o = BackendOrder(orderID: id)
        o.userID = user
        o.bundleID = Self.bundle
        o.productID = product
        o.quantity = 1
        o.price = 990
        o.currency = "USD"
        o.storefront = storefront
        o.userCountry = storefront
        o.createdAt = at
        o.status = status
        o.transactionID = tx
        o.appAccountToken = token
        batch.orders.append((o, "orders", "data/orders.csv:\(batch.orders.count + 2)"))
    }

    /// An account of the accounts source (the `users` view), with the app account token the app gave it.
    mutating func account(_ id: String, token: String? = nil, country: String = "USA") {
        var u = UserAccount(userID: id)
        u.country = country
        u.appAccountToken = token?.lowercased()
        batch.users.append((u, "users", "data/users.csv:\(batch.users.count + 2)"))
    }

    mutating func credit(
        _ id: String, tx: String?, order: String?, user: String, at: Int64, product: String? = pack100,
        units: Int64 = 100, reversedAt: Int64? = nil, reason: String? = nil, consumed: (Int64, Int64)? = nil
    ) {
        var c = Credit(creditID: id)
        c.transactionID = tx
        c.orderID = order
        c.userID = user
        c.productID = product
        c.units = units
        c.creditedAt = at
        c.reversedAt = reversedAt
        c.reversalReason = reason
        c.consumedUnits = consumed?.0
        c.consumedAt = consumed?.1
        batch.credits.append((c, "credits", "data/credits.jsonl:\(batch.credits.count + 1)"))
    }

    mutating func notification(
        _ uuid: String, type: String, tx: String, at: Int64, revokedAt: Int64? = nil, reason: String? = nil,
        subtype: String? = nil, gracePeriodExpires: Int64? = nil
    ) {
        var n = AppleNotification(notificationUUID: uuid)
        n.notificationType = type
        n.subtype = subtype
        n.gracePeriodExpiresDate = gracePeriodExpires
        n.signedDate = at
        n.environment = "Production"
        n.bundleID = Self.bundle
        n.transactionID = tx
        n.originalTransactionID = tx
        n.productID = Self.pack100
        n.revocationDate = revokedAt
        n.revocationReason = revokedAt == nil ? nil : 0
        n.consumptionRequestReason = reason
        n.verification = .verified
        n.sourceName = "asn2"
        n.sourceRef = "data/notifications.jsonl:\(batch.notifications.count + 1)"
        n.payloadHash = "n-\(uuid)"
        batch.notifications.append(n)
    }

    /// Writes the batch and reference data as one run; runs the shipped rules (findings) when asked.
    mutating func commit(runRules: Bool) throws {
        var reference = ReferenceData()
        reference.apps = [.init(bundleID: Self.bundle, appAppleID: 1_234_567, environments: ["Production", "Sandbox"])]
        reference.products = [
            .init(
                bundleID: Self.bundle, productID: Self.pack100, type: "Consumable", units: 100, referencePrice: 990,
                referenceCurrency: "USD"),
            .init(
                bundleID: Self.bundle, productID: Self.noAds, type: "Non-Consumable", units: 1, referencePrice: 2990,
                referenceCurrency: "USD"),
            .init(
                bundleID: Self.bundle, productID: Self.monthly, type: "Auto-Renewable Subscription", units: 1,
                referencePrice: 4990, referenceCurrency: "USD"),
            .init(
                bundleID: Self.bundle, productID: Self.yearly, type: "Auto-Renewable Subscription", units: 1,
                referencePrice: 39_990, referenceCurrency: "USD"),
            .init(
                bundleID: Self.bundle, productID: Self.gems, type: "Consumable", units: 1000, referencePrice: 990,
                referenceCurrency: "USD"),
            .init(
                bundleID: Self.bundle, productID: Self.tip, type: "Consumable", units: 0, referencePrice: 990,
                referenceCurrency: "USD"),
        ]
        reference.testers = ["qa-1"]
        reference.fxRates = [
            .init(currency: "USD", rateDate: Self.now - 90 * Self.day, perEUR: 1.0, source: "test"),
            .init(currency: "TRY", rateDate: Self.now - 90 * Self.day, perEUR: 40.0, source: "test"),
        ]
        try store.replaceReferenceData(reference)
        let runID = try store.beginRun(
            RunStart(
                startedAt: Self.now, windowSince: nil, windowUntil: Self.now, configHash: "test", toolVersion: "test"))
        _ = try store.write(batch, runID: runID)
        batch = IngestBatch()
        if runRules {
            let (rules, errors) = RuleSet.load(from: Fixtures.repoRoot.appendingPathComponent("rules"))
            precondition(errors.isEmpty, "\(errors)")
            let engine = RuleEngine(store: store, referenceCurrency: "USD")
            let result = try engine.evaluate(rules: rules, runID: runID, now: Self.now)
            try engine.persist(result, runID: runID)
        }
        try store.finishRun(runID, status: "ok", finishedAt: Self.now + 60_000, summaryJSON: nil)
    }

    /// A lookup service over a read-only connection to the world's store.
    func service(appleOrderLookup: (any AppleOrderLookup)? = nil) throws -> LookupService {
        LookupService(
            store: try SQLiteStore(path: storePath, readOnly: true), referenceCurrency: "USD",
            appleOrderLookup: appleOrderLookup)
    }

    func lookup(_ id: String, kind: IDKind? = nil, consented: Bool = false) throws -> LookupResult {
        try service().lookup(LookupQuery(id: id, kind: kind, customerConsented: consented))
    }
}
