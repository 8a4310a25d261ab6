import Foundation
import Testing

@testable import IAPGuard

/// A credit that names only its order takes the order's transaction id, whichever of the two arrives first,
/// follows the order when it changes, and keeps a transaction id its export names (store level).
@Suite struct CreditOrderLinkTests {
    static let t0: Int64 = 1_780_000_000_000

    static func order(_ id: String, tx: String?, user: String = "u1") -> BackendOrder {
        var o = BackendOrder(orderID: id)
        o.userID = user
        o.transactionID = tx
        o.createdAt = t0
        return o
    }

    static func credit(_ id: String, order: String?, tx: String? = nil, user: String = "u1", units: Int64 = 550)
        -> Credit
    {
        var c = Credit(creditID: id)
        c.orderID = order
        c.transactionID = tx
        c.userID = user
        c.units = units
        c.creditedAt = t0 + 60_000
        return c
    }

    static func subscription(_ tx: String) -> AppleSighting {
        var t = AppleTransaction(transactionID: tx)
        t.originalTransactionID = tx
        t.bundleID = "com.example.coins"
        t.productID = "com.example.coins.plus.monthly"
        t.type = "Auto-Renewable Subscription"
        t.environment = "Production"
        t.purchaseDate = t0
        return AppleSighting(
            transaction: t, sourceKind: .jws, sourceName: "signed", sourceRef: "tx.jsonl:\(tx)", payloadHash: "h\(tx)",
            verification: VerificationOutcome(status: .verified))
    }

    /// Writes each batch as one run and links after it, as the pipeline does; returns the run ids.
    @discardableResult
    static func runs(_ batches: [IngestBatch], on store: any SQLBackedStore) throws -> [Int64] {
        try LedgerPassRuns.runs(batches, on: store) { try $0.linkCreditsToOrderTransactions(runID: $1) }
    }

    static func batch(orders: [BackendOrder] = [], credits: [Credit] = [], sightings: [AppleSighting] = [])
        -> IngestBatch
    {
        var b = IngestBatch()
        b.orders = orders.enumerated().map { ($0.element, "orders", "orders.csv:\($0.offset + 2)") }
        b.credits = credits.enumerated().map { ($0.element, "credits", "credits.csv:\($0.offset + 2)") }
        b.sightings = sightings
        return b
    }

    /// `credit_id: transaction_id` of every credit.
    static func links(_ store: any SQLBackedStore) throws -> [String: String] {
        var result: [String: String] = [:]
        for row in try store.rows("SELECT credit_id, transaction_id FROM credits") {
            result[row[0].textValue ?? ""] = row[1].textValue ?? "-"
        }
        return result
    }

    /// The whole behaviour on one store (also run on PostgreSQL by `PostgresStoreTests`).
    static func checkLinks(on makeStore: () throws -> any SQLBackedStore) throws {
        let retried = [credit("c1", order: "o-1"), credit("c1-retry", order: "o-1")]
        for (name, batches) in [
            ("order first", [batch(orders: [order("o-1", tx: "1001")]), batch(credits: retried)]),
            ("credits first", [batch(credits: retried), batch(orders: [order("o-1", tx: "1001")])]),
            ("one run", [batch(orders: [order("o-1", tx: "1001")], credits: retried)]),
        ] {
            let store = try makeStore()
            let runIDs = try runs(batches, on: store)
            // Both credits of the order are credits of its transaction (so a retry is IAP-001's duplicate).
            #expect(try links(store) == ["c1": "1001", "c1-retry": "1001"], "\(name)")
            #expect(
                try store.rows("SELECT DISTINCT last_run_id FROM credits").map { $0[0].integerValue }
                    == [runIDs.last], "\(name)")
            // Idempotent: linking again and reading the same rows again change nothing.
            let before = try PostgresStoreTests.dump(store)
            #expect(try store.linkCreditsToOrderTransactions(runID: runIDs.last ?? 0) == 0, "\(name)")
            try runs([batches.last ?? batch()], on: store)
            #expect(try PostgresStoreTests.dump(store) == before, "\(name)")
        }

        // The order changes its transaction: the linked credit follows, and its old transaction is logged (so
        // it is evaluated again). A credit whose export names a transaction keeps it.
        let moving = try makeStore()
        try runs(
            [
                batch(
                    orders: [order("o-2", tx: "2001")],
                    credits: [credit("c2", order: "o-2"), credit("c3", order: "o-2", tx: "2009")])
            ],
            on: moving)
        let second = try runs([batch(orders: [order("o-2", tx: "2002")])], on: moving)
        #expect(try links(moving) == ["c2": "2002", "c3": "2009"])
        #expect(
            try moving.rows(
                "SELECT old_value, new_value FROM change_log WHERE run_id = \(second[0]) AND entity = 'credit' AND entity_key = 'c2'"
            ).map { $0.map(\.textValue) } == [["2001", "2002"]])
        // Exported later with a transaction of its own: the link ends, and the order no longer moves it.
        try runs([batch(credits: [credit("c2", order: "o-2", tx: "2005")])], on: moving)
        try runs([batch(orders: [order("o-2", tx: "2003")])], on: moving)
        #expect(try links(moving) == ["c2": "2005", "c3": "2009"])

        // Rows stored before the store could link them (an upgraded store): the next run links them although
        // neither the credit nor its order changes in it.
        let upgraded = try makeStore()
        let earlier = try upgraded.beginRun(
            RunStart(startedAt: 1, windowSince: nil, windowUntil: nil, configHash: "h", toolVersion: "t"))
        _ = try upgraded.write(
            batch(orders: [order("o-7", tx: "7001")], credits: [credit("c7", order: "o-7")]), runID: earlier)
        #expect(try links(upgraded) == ["c7": "-"])
        try runs([batch()], on: upgraded)
        #expect(try links(upgraded) == ["c7": "7001"])

        // An order without a transaction links nothing; a subscription order credited once per renewal is
        // not the renewals' transaction, while its single credit is.
        let subscriptions = try makeStore()
        try runs(
            [
                batch(
                    orders: [order("o-4", tx: nil), order("o-5", tx: "5001"), order("o-6", tx: "6001")],
                    credits: [
                        credit("c4", order: "o-4"), credit("c5a", order: "o-5", units: 30),
                        credit("c5b", order: "o-5", units: 30), credit("c6", order: "o-6", units: 30),
                    ],
                    sightings: [subscription("5001"), subscription("6001")])
            ], on: subscriptions)
        #expect(try links(subscriptions) == ["c4": "-", "c5a": "-", "c5b": "-", "c6": "6001"])
    }

    @Test func creditsNamingOnlyTheirOrderTakeTheOrdersTransaction() throws {
        try Self.checkLinks(on: { try LedgerPassRuns.memoryStore() })
    }

    /// A copy of transaction `tx` submitted with `order` (the wrapper's `order_id`).
    static func copy(
        _ tx: String, order: String, product: String = "com.example.coins.pack100", at: Int64 = t0 + 1_000,
        failed: Bool = false
    ) -> AppleSighting {
        var t = AppleTransaction(transactionID: tx)
        t.originalTransactionID = tx
        t.bundleID = "com.example.coins"
        t.productID = product
        t.environment = "Production"
        t.purchaseDate = at
        var s = AppleSighting(
            transaction: t, sourceKind: .jws, sourceName: "signed", sourceRef: "tx.jsonl:\(tx)-\(order)",
            payloadHash: "h\(tx)-\(order)",
            verification: failed ? VerificationOutcome(status: .failed, reason: "bad-signature") : .verified)
        s.submittedOrderID = order
        return s
    }

    /// An order of `product` that names no transaction.
    static func bareOrder(_ id: String, user: String, product: String = "com.example.coins.pack100") -> BackendOrder {
        var o = order(id, tx: nil, user: user)
        o.productID = product
        return o
    }

    /// The whole behaviour of links through submitted copies on one store (also run on PostgreSQL).
    static func checkSubmittedLinks(on makeStore: () throws -> any SQLBackedStore) throws {
        // A replay into an accomplice's order: neither the order nor its credit names the transaction; the
        // copy submitted with the order does. Whichever arrives first.
        for (name, batches) in [
            (
                "copy first",
                [
                    batch(sightings: [copy("9001", order: "o-9")]),
                    batch(orders: [bareOrder("o-9", user: "u9")], credits: [credit("c9", order: "o-9", user: "u9")]),
                ]
            ),
            (
                "credit first",
                [
                    batch(orders: [bareOrder("o-9", user: "u9")], credits: [credit("c9", order: "o-9", user: "u9")]),
                    batch(sightings: [copy("9001", order: "o-9")]),
                ]
            ),
        ] {
            let store = try makeStore()
            let runIDs = try runs(batches, on: store)
            #expect(try links(store) == ["c9": "9001"], "\(name)")
            #expect(
                try store.rows("SELECT last_run_id FROM credits").map { $0[0].integerValue } == [runIDs.last],
                "\(name)")
            let before = try PostgresStoreTests.dump(store)
            #expect(try store.linkCreditsToOrderTransactions(runID: runIDs.last ?? 0) == 0, "\(name)")
            #expect(try PostgresStoreTests.dump(store) == before, "\(name)")
        }

        // A legacy receipt carries an older purchase of the product beside the order's: the one bought after
        // the order was created is its payment. Two purchases after it are ambiguous: no link. A verified copy
        // wins over a failed one, the order's product over another; only failed copies still link (a forged
        // payload credited is IAP-020's).
        let legacy = try makeStore()
        try runs(
            [
                batch(
                    orders: [
                        bareOrder("o-10", user: "u10"), bareOrder("o-11", user: "u11"), bareOrder("o-12", user: "u12"),
                        bareOrder("o-13", user: "u13"),
                    ],
                    credits: [
                        credit("c10", order: "o-10", user: "u10"), credit("c11", order: "o-11", user: "u11"),
                        credit("c12", order: "o-12", user: "u12"), credit("c13", order: "o-13", user: "u13"),
                    ],
                    sightings: [
                        copy("10001", order: "o-10", at: t0 - 3 * 86_400_000), copy("10002", order: "o-10"),
                        copy("11001", order: "o-11"), copy("11002", order: "o-11", at: t0 + 5_000),
                        copy("12001", order: "o-12", failed: true), copy("12002", order: "o-12"),
                        copy("12003", order: "o-12", product: "com.example.coins.pack6500"),
                        copy("13001", order: "o-13", failed: true),
                    ])
            ], on: legacy)
        #expect(try links(legacy) == ["c10": "10002", "c11": "-", "c12": "12002", "c13": "13001"])

        // The order names a transaction later: the credit follows it. A change of an order that still names
        // none keeps the link.
        let follow = try makeStore()
        try runs(
            [
                batch(
                    orders: [bareOrder("o-14", user: "u14"), bareOrder("o-15", user: "u15")],
                    credits: [credit("c14", order: "o-14", user: "u14"), credit("c15", order: "o-15", user: "u15")],
                    sightings: [copy("14001", order: "o-14"), copy("15001", order: "o-15")])
            ], on: follow)
        var named = order("o-14", tx: "14009", user: "u14")
        named.productID = "com.example.coins.pack100"
        var paid = bareOrder("o-15", user: "u15")
        paid.status = "paid"
        try runs([batch(orders: [named, paid])], on: follow)
        #expect(try links(follow) == ["c14": "14009", "c15": "15001"])
    }

    @Test func creditsWhoseOrderNamesNoTransactionTakeTheOneSubmittedWithTheOrder() throws {
        try Self.checkSubmittedLinks(on: { try LedgerPassRuns.memoryStore() })
    }
}
