import Foundation
import Testing

@testable import IAPGuard

/// What the pull asks Apple about: every transaction an order, credit or notification names (in any
/// configured app), the notifications of the run's own window (all types), refund history that scales, and
/// every HTTP attempt counted.
@Suite struct PullCoverageTests {
    static let day: Int64 = 86_400_000

    static func pull(
        _ world: NetworkTestWorld, _ config: Config, _ store: SQLiteStore, window: ApplePuller.PullWindow = .init(),
        now: Int64? = nil
    ) throws -> ApplePullSummary {
        var puller = try world.puller(config)
        if let now { puller.now = { now } }
        let runID = try store.beginRun(
            RunStart(
                startedAt: Clock.nowMillis(), windowSince: window.since, windowUntil: window.until, configHash: "t",
                toolVersion: "t"))
        return try #require(try puller.pull(store: store, runID: runID, window: window).first)
    }

    static func order(_ id: String, transaction: String, bundle: String?) -> (BackendOrder, String, String) {
        var order = BackendOrder(orderID: id)
        order.userID = "u-\(id)"
        order.bundleID = bundle
        order.productID = NetworkTestWorld.product
        order.transactionID = transaction
        order.status = "paid"
        return (order, "orders", "orders.csv:\(id)")
    }

    // MARK: Discovery

    @Test func transactionsOnlyAnOrderOrANotificationNamesAreLookedUp() throws {
        let world = try NetworkTestWorld()
        let ordered = "2100000000000001"
        let notified = "2100000000000002"
        for id in [ordered, notified] {
            world.fake.addHistory(try world.signedTransaction(id), transactionID: id, environment: .production)
        }
        let config = try world.config(
            environments: "[Production]", pull: "{notifications: false, refund_history: false}")
        let store = try world.openStore(config)
        var batch = IngestBatch()
        batch.orders = [Self.order("o1", transaction: ordered, bundle: NetworkTestWorld.bundleID)]
        // A notification whose signature did not verify names a transaction the store has no good copy of.
        var notification = AppleNotification(notificationUUID: "00000000-0000-4000-8000-00000000c001")
        notification.notificationType = "DID_RENEW"
        notification.transactionID = notified
        notification.verification = VerificationOutcome(status: .failed, reason: "chain-untrusted")
        notification.sourceName = "asn2"
        notification.sourceRef = "n.jsonl:1"
        notification.payloadHash = "h"
        batch.notifications = [notification]
        _ = try store.write(batch, runID: 0)
        let summary = try Self.pull(world, config, store)
        #expect(summary.errors.isEmpty, "\(summary.errors)")
        #expect(summary.transactionsNotFound.isEmpty)
        #expect(
            try world.rows(store, "SELECT transaction_id, verification FROM transactions ORDER BY 1") == [
                [ordered, "verified"], [notified, "verified"],
            ])
    }

    @Test func aTransactionOfAnotherAppIsLookedUpWithThatAppsCredentials() throws {
        let other = "com.example.gems"
        let world = try NetworkTestWorld(otherApps: [other])
        let id = "2200000000000001"
        // App B's transaction, redeemed in an order of app A: app A's credentials get 4040010.
        world.fake.addHistory(
            try world.signedTransaction(id, bundle: other), transactionID: id, environment: .production, bundle: other)
        let config = try world.config(
            environments: "[Production]", pull: "{notifications: false, refund_history: false}")
        let store = try world.openStore(config)
        var batch = IngestBatch()
        batch.orders = [Self.order("o1", transaction: id, bundle: NetworkTestWorld.bundleID)]
        _ = try store.write(batch, runID: 0)
        let summary = try Self.pull(world, config, store)
        #expect(summary.errors.isEmpty, "\(summary.errors)")
        #expect(summary.transactionsNotFound.isEmpty)
        #expect(try world.rows(store, "SELECT bundle_id, verification FROM transactions") == [[other, "verified"]])
        // Asked with A's credentials first, then B's; one history call succeeded.
        #expect(world.fake.servedPaths.filter { $0.hasSuffix("/history/\(id)") }.count == 2)
        // Not found anywhere: still concluded, once per app.
        let missing = "2200000000000009"
        var more = IngestBatch()
        more.orders = [Self.order("o2", transaction: missing, bundle: NetworkTestWorld.bundleID)]
        _ = try store.write(more, runID: 0)
        let second = try Self.pull(world, config, store)
        #expect(second.transactionsNotFound == [missing])
        #expect(world.fake.servedPaths.filter { $0.hasSuffix("/history/\(missing)") }.count == 2)
    }

    // MARK: Notification window and types

    /// 34 notifications of several kinds, signed between 98 and 70 days ago.
    static func oldNotifications(_ world: NetworkTestWorld, now: Int64) throws -> [Int64] {
        let types = ["SUBSCRIBED", "DID_RENEW", "REFUND", "CONSUMPTION_REQUEST", "DID_CHANGE_RENEWAL_STATUS", "REVOKE"]
        var dates: [Int64] = []
        for i in 0..<34 {
            let signed = now - 98 * day + Int64(i) * 20 * 3_600_000
            let id = "23000000000000\(10 + i)"
            world.fake.addNotification(
                .init(
                    signedDate: signed, type: types[i % types.count],
                    signedPayload: try world.signedNotification(
                        uuid: String(format: "00000000-0000-4000-8000-%012d", 100 + i), type: types[i % types.count],
                        signedDate: signed,
                        transaction: try world.signedTransaction(id, purchaseDate: signed - 60_000))),
                environment: .production)
            dates.append(signed)
        }
        return dates
    }

    @Test func aBackfillWithUntilInThePastGetsItsNotificationsAfterLaterRuns() throws {
        let world = try NetworkTestWorld(pageSize: 20)
        let now = Clock.nowMillis()
        _ = try Self.oldNotifications(world, now: now)
        let config = try world.config(
            environments: "[Production]", pull: "{transaction_history: false, refund_history: false}",
            lookbackDays: nil)
        let store = try world.openStore(config)
        // A normal run first: its window (the last 30 days) has none of them.
        let normal = try Self.pull(world, config, store)
        #expect(normal.notifications == 0)
        // The backfill: --until 69 days ago, the default 30-day look-back before it.
        let backfill = try Self.pull(world, config, store, window: .init(until: now - 69 * Self.day))
        #expect(backfill.errors.isEmpty, "\(backfill.errors)")
        #expect(try world.rows(store, "SELECT COUNT(*) FROM notifications") == [["34"]])
        // An explicit --since reads exactly its days.
        let fresh = try NetworkTestWorld(pageSize: 20)
        let dates = try Self.oldNotifications(fresh, now: now)
        let freshConfig = try fresh.config(
            environments: "[Production]", pull: "{transaction_history: false, refund_history: false}",
            lookbackDays: nil)
        let freshStore = try fresh.openStore(freshConfig)
        _ = try Self.pull(fresh, freshConfig, freshStore, window: .init(since: dates[10], until: dates[20]))
        #expect(try fresh.rows(freshStore, "SELECT COUNT(*) FROM notifications") == [["11"]])
        // The backfill did not move the watermark past the gap: a normal run still reads the last days.
        let mark = try #require(
            try PullWatermark.load(freshStore, source: "apple", key: "notifications/com.example.coins/Production/*/all")
        )
        #expect(mark.doneThrough == dates[20])
    }

    @Test func theDefaultPullsEveryNotificationType() throws {
        let world = try NetworkTestWorld(pageSize: 20)
        let now = Clock.nowMillis()
        for (i, type) in ["SUBSCRIBED", "DID_RENEW", "ONE_TIME_CHARGE", "REFUND"].enumerated() {
            let signed = now - Int64(i + 1) * Self.day
            world.fake.addNotification(
                .init(
                    signedDate: signed, type: type,
                    signedPayload: try world.signedNotification(
                        uuid: "00000000-0000-4000-8000-00000000d00\(i)", type: type, signedDate: signed,
                        transaction: try world.signedTransaction("240000000000000\(i)", purchaseDate: signed))),
                environment: .production)
        }
        let config = try world.config(
            environments: "[Production]", pull: "{transaction_history: false, refund_history: false}")
        let store = try world.openStore(config)
        let summary = try Self.pull(world, config, store)
        #expect(summary.calls == 1)  // one query for all types
        #expect(
            try world.rows(store, "SELECT notification_type FROM notifications ORDER BY 1") == [
                ["DID_RENEW"], ["ONE_TIME_CHARGE"], ["REFUND"], ["SUBSCRIBED"],
            ])
    }

    // MARK: Refund history

    /// `count` credited, verified purchases of distinct Apple customers (from a file source), one user each.
    static func customers(_ world: NetworkTestWorld, _ store: SQLiteStore, count: Int, runID: Int64) throws -> [String]
    {
        var batch = IngestBatch()
        var ids: [String] = []
        for i in 0..<count {
            let id = String(2_500_000_000_000_000 + i)
            ids.append(id)
            var t = AppleTransaction(transactionID: id)
            t.originalTransactionID = id
            t.bundleID = NetworkTestWorld.bundleID
            t.productID = NetworkTestWorld.product
            t.environment = "Production"
            t.purchaseDate = NetworkTestWorld.t0
            t.signedDate = NetworkTestWorld.t0
            batch.sightings.append(
                AppleSighting(
                    transaction: t, sourceKind: .jws, sourceName: "signed", sourceRef: "tx.jsonl:\(i)",
                    payloadHash: "h\(i)", verification: VerificationOutcome(status: .verified)))
            var credit = Credit(creditID: "c\(i)")
            credit.transactionID = id
            credit.userID = "u-\(i)"
            credit.units = 600
            batch.credits.append((credit, "credits", "credits.jsonl:\(i)"))
            world.fake.addHistory(try world.signedTransaction(id), transactionID: id, environment: .production)
        }
        _ = try store.write(batch, runID: runID)
        return ids
    }

    static func refundCalls(_ world: NetworkTestWorld, after: Int) -> [String] {
        Array(world.fake.servedPaths.dropFirst(after)).filter { $0.contains("/refund/lookup/") }
            .map { String($0.split(separator: "/").last ?? "") }
    }

    @Test func refundHistoryPollsActiveCustomersAndARollingSweep() throws {
        let world = try NetworkTestWorld()
        let config = try world.config(
            environments: "[Production]", maxCalls: 40,
            pull: "{notifications: false, transaction_history: false, refund_sweep: 10}")
        let store = try world.openStore(config)
        let ids = try Self.customers(world, store, count: 40, runID: 0)
        // Four runs with nothing new: 10 customers each, every customer exactly once.
        var polled: [String] = []
        for _ in 0..<4 {
            let before = world.fake.servedPaths.count
            let summary = try Self.pull(world, config, store)
            #expect(summary.errors.isEmpty, "\(summary.errors)")
            let calls = Self.refundCalls(world, after: before)
            #expect(calls.count == 10)
            #expect(summary.refundCustomers == 10)
            polled += calls
        }
        #expect(polled.sorted() == ids)
        // New activity for one customer (a credit changed in this run): polled in the next run, on top of
        // the sweep.
        let runID = try store.beginRun(
            RunStart(startedAt: 0, windowSince: nil, windowUntil: nil, configHash: "t", toolVersion: "t"))
        var batch = IngestBatch()
        var credit = Credit(creditID: "c7")
        credit.transactionID = ids[7]
        credit.userID = "u-7"
        credit.units = 600
        credit.reversedAt = NetworkTestWorld.t0
        batch.credits = [(credit, "credits", "credits.jsonl:7")]
        _ = try store.write(batch, runID: runID)
        let before = world.fake.servedPaths.count
        _ = try Self.pull(world, config, store)
        let calls = Self.refundCalls(world, after: before)
        #expect(calls.first == ids[7])
        // The sweep wrapped to the start of the population: at most its 10 calls besides.
        #expect((2...11).contains(calls.count))
        #expect(Set(calls).count == calls.count)
    }

    @Test func theSweepMovesPastTransactionsOfAnEnvironmentItDoesNotPoll() throws {
        let world = try NetworkTestWorld()
        let config = try world.config(
            environments: "[Production]", maxCalls: 40,
            pull: "{notifications: false, transaction_history: false, refund_sweep: 2}")
        let store = try world.openStore(config)
        let ids = try Self.customers(world, store, count: 6, runID: 0)
        // The first four are Sandbox purchases: this source has no Sandbox client.
        _ = try store.inTransaction {
            try store.database.run(
                "UPDATE apple_transaction SET environment = 'Sandbox' WHERE transaction_id < ?", [.text(ids[4])])
        }
        var polled: [String] = []
        for _ in 0..<3 {
            let before = world.fake.servedPaths.count
            _ = try Self.pull(world, config, store)
            polled += Self.refundCalls(world, after: before)
        }
        #expect(Set(polled) == Set(ids.suffix(2)))
    }

    @Test func severalUsersOfOneAppleCustomerArePolledOnce() throws {
        let world = try ApplePullerTests.populated()
        let config = try world.config(environments: "[Production]", pull: "{notifications: false}")
        let store = try world.openStore(config)
        // Five purchases of one Apple customer credited to three backend users.
        try world.credit(store, ApplePullerTests.credited, runID: 0)
        let summary = try Self.pull(world, config, store)
        #expect(summary.errors.isEmpty, "\(summary.errors)")
        #expect(summary.refundCustomers == 1)
        #expect(Self.refundCalls(world, after: 0).count == 1)
        #expect(try world.rows(store, "SELECT COUNT(*) FROM transactions WHERE revocation_date IS NOT NULL") == [["2"]])
    }

    // MARK: Attempts

    @Test func everyRequestOnTheWireIsCountedEvenOnKeptAliveConnections() throws {
        let world = try NetworkTestWorld(keepAlive: true)
        let ids = (1...6).map { "260000000000000\($0)" }
        for id in ids {
            world.fake.addHistory(try world.signedTransaction(id), transactionID: id, environment: .production)
        }
        let config = try world.config(
            environments: "[Production]", pull: "{notifications: false, refund_history: false}")
        let store = try world.openStore(config)
        try world.credit(store, ids, runID: 0)
        // The first page is served; the next requests, sent on the kept-alive connection, are dropped.
        world.fake.inject(.pass, on: "/history/")
        for _ in 0..<3 { world.fake.inject(.drop, on: "/history/") }
        let summary = try Self.pull(world, config, store)
        #expect(summary.errors.isEmpty, "\(summary.errors)")
        #expect(summary.attempts == world.fake.requestCount)
        #expect(summary.attempts == summary.calls + 3)
    }
}

/// The whole job with Apple's data from the API alone, default pull settings, `--until` in the past and
/// faults on every kind of call.
@Suite struct PullFromTheAPIAloneTests {
    static let day: Int64 = 86_400_000

    @Test func storesEveryNotificationOfTheWindowAndEveryTransactionAnOrderOrCreditNames() throws {
        let world = try NetworkTestWorld(pageSize: 5, keepAlive: true)
        let now = Clock.nowMillis()
        let until = (now - 40 * Self.day) / 1000 * 1000  // a whole second, as --until must be
        // 34 notifications of several types in the 30 days before --until, and 3 after it (not this run's).
        let types = ["SUBSCRIBED", "DID_RENEW", "ONE_TIME_CHARGE", "REFUND", "CONSUMPTION_REQUEST", "REFUND_DECLINED"]
        for i in 0..<37 {
            let signed = i < 34 ? until - 29 * Self.day + Int64(i) * 18 * 3_600_000 : until + Int64(i - 33) * Self.day
            let type = types[i % types.count]
            world.fake.addNotification(
                .init(
                    signedDate: signed, type: type,
                    signedPayload: try world.signedNotification(
                        uuid: String(format: "00000000-0000-4000-8000-%012d", 500 + i), type: type, signedDate: signed,
                        transaction: try world.signedTransaction(
                            String(2_700_000_000_000_000 + i), purchaseDate: signed - 60_000))),
                environment: .production)
        }
        // Six customers, each with two purchases: the backend's orders name all twelve, its credits eight
        // (four orders were paid and never credited).
        var orderLines = ["order_id,user_id,bundle_id,product_id,status,transaction_id,created_at"]
        var creditLines: [String] = []
        var named: [String] = []
        for customer in 0..<6 {
            for purchase in 0..<2 {
                let id = String(2_800_000_000_000_000 + customer * 10 + purchase)
                let bought = until - Int64(20 - customer) * Self.day + Int64(purchase) * 3_600_000
                world.fake.addHistory(
                    try world.signedTransaction(id, purchaseDate: bought), transactionID: id,
                    environment: .production, customer: "c\(customer)")
                named.append(id)
                orderLines.append(
                    "o\(id),u\(customer),\(NetworkTestWorld.bundleID),\(NetworkTestWorld.product),paid,\(id),\(bought)")
                if (customer + purchase) % 3 != 0 {
                    creditLines.append(
                        "{\"credit_id\": \"c\(id)\", \"transaction_id\": \"\(id)\", \"order_id\": \"o\(id)\", \"user_id\": \"u\(customer)\", \"product_id\": \"\(NetworkTestWorld.product)\", \"units\": 600, \"credited_at\": \(bought + 60_000)}"
                    )
                }
            }
        }
        let data = world.directory.appendingPathComponent("data")
        try Data((orderLines.joined(separator: "\n") + "\n").utf8).write(to: data.appendingPathComponent("orders.csv"))
        try Data((creditLines.joined(separator: "\n") + "\n").utf8).write(
            to: data.appendingPathComponent("credits.jsonl"))
        // Faults on every kind of call: rate limits with Retry-After, 500s, truncated bodies, dropped
        // connections (on kept-alive connections, after a served request).
        for path in ["/notifications/", "/history/", "/refund/"] {
            world.fake.inject(.pass, on: path)
            world.fake.inject(.tooManyRequests(retryAfter: "1"), on: path)
            world.fake.inject(.status(500, errorCode: nil), on: path)
            world.fake.inject(.truncated, on: path)
            world.fake.inject(.drop, on: path)
        }
        let config = try world.config(
            environments: "[Production]", maxCalls: nil,
            sources: [
                "{name: orders, kind: orders, format: csv, path: data/orders.csv, absent_columns: [price, currency]}",
                "{name: credits, kind: credits, path: data/credits.jsonl}",
            ], lookbackDays: nil)
        let pipeline = Pipeline(config: config, verifier: try world.verifier(config), logger: world.logger)
        let summary = try pipeline.run(Pipeline.Options(until: until, failOn: nil))
        #expect(summary.errors.isEmpty, "\(summary.errors)")
        let store = try SQLiteStore(path: config.storePath.path)
        #expect(try world.rows(store, "SELECT COUNT(*) FROM notifications") == [["34"]])
        let verified = try world.rows(
            store,
            "SELECT transaction_id FROM transactions WHERE verification = 'verified' AND transaction_id LIKE '28%'"
        ).compactMap { $0[0] }
        #expect(verified.sorted() == named.sorted())
        // Every HTTP request the fake saw is counted, in the summary and the metrics.
        let pull = try #require(summary.appStoreAPI.first)
        #expect(pull.left.isEmpty, "\(pull.left)")
        #expect(pull.attempts == world.fake.requestCount)
        #expect(pull.attempts >= pull.calls + 12)
        let metrics = MetricsFile.render(summary: summary, exitCode: 0, now: now, lastSuccess: nil)
        #expect(metrics.contains("iapguard_api_http_attempts{source=\"apple\"} \(pull.attempts)"))
        #expect(summary.text().contains("\(pull.attempts) attempt(s)"))
        // The paid-but-never-credited purchases are found from Apple's data alone.
        let missing = try world.rows(
            store,
            "SELECT transaction_id FROM findings WHERE rule_id = 'IAP-014' AND transaction_id LIKE '28%' ORDER BY 1"
        ).compactMap { $0[0] }
        #expect(missing.count == 4)
    }
}
