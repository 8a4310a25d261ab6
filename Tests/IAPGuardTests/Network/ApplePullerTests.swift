import Foundation
import Testing

@testable import IAPGuard
@testable import IAPGuardTesting

@Suite("Apple puller against a loopback App Store Server API")
struct ApplePullerTests {
    static let day: Int64 = 86_400_000

    /// A world with 5 credited production transactions of one customer history, two refunds and 5
    /// notifications over the last days.
    static func populated(pageSize: Int = 2) throws -> NetworkTestWorld {
        let world = try NetworkTestWorld(pageSize: pageSize)
        for i in 1...5 {
            let id = "200000000000000\(i)"
            world.fake.addHistory(
                try world.signedTransaction(id, purchaseDate: NetworkTestWorld.t0 + Int64(i) * day), transactionID: id,
                environment: .production)
        }
        for i in [2, 4] {
            let id = "200000000000000\(i)"
            world.fake.addRefund(
                try world.signedTransaction(
                    id, purchaseDate: NetworkTestWorld.t0 + Int64(i) * day,
                    revocationDate: NetworkTestWorld.t0 + Int64(i + 1) * day),
                environment: .production)
        }
        let now = Clock.nowMillis()
        for i in 1...5 {
            // Notifications about other customers' transactions: the credited ones still need their history.
            let id = "210000000000000\(i)"
            let type = i % 2 == 0 ? "REFUND" : "CONSUMPTION_REQUEST"
            world.fake.addNotification(
                .init(
                    signedDate: now - Int64(10 - i) * day, type: type,
                    signedPayload: try world.signedNotification(
                        uuid: "00000000-0000-4000-8000-00000000000\(i)", type: type,
                        signedDate: now - Int64(10 - i) * day,
                        transaction: try world.signedTransaction(id, purchaseDate: NetworkTestWorld.t0 + Int64(i) * day)
                    )),
                environment: .production)
        }
        return world
    }

    static let credited = (1...5).map { "200000000000000\($0)" }

    /// Runs one pull in a fresh run of `store`.
    static func pull(_ world: NetworkTestWorld, _ config: Config, _ store: SQLiteStore, sleeps: SleepRecorder = .init())
        throws -> ApplePullSummary
    {
        let runID = try store.beginRun(
            RunStart(
                startedAt: Clock.nowMillis(), windowSince: nil, windowUntil: nil, configHash: "t", toolVersion: "t"))
        let summaries = try world.puller(config, sleeps: sleeps).pull(store: store, runID: runID)
        return try #require(summaries.first)
    }

    @Test func pullsPagedHistoryRefundsAndNotificationsAndVerifiesThem() throws {
        let world = try Self.populated()
        let config = try world.config(environments: "[Production]")
        let store = try world.openStore(config)
        try world.credit(store, Self.credited, runID: 0)
        let summary = try Self.pull(world, config, store)

        #expect(summary.errors.isEmpty, "\(summary.errors)")
        #expect(summary.left.isEmpty, "\(summary.left)")
        #expect(summary.historyTransactions == 5)
        #expect(summary.historyPages == 3)
        #expect(summary.notifications == 5)  // REFUND and CONSUMPTION_REQUEST are among the default types
        let transactions = try world.rows(
            store, "SELECT transaction_id, verification FROM transactions WHERE transaction_id LIKE '20%' ORDER BY 1")
        #expect(transactions.map { $0[0] } == Self.credited.map { Optional($0) })
        #expect(transactions.allSatisfy { $0[1] == "verified" })
        let refunds = try world.rows(
            store, "SELECT transaction_id FROM transactions WHERE revocation_date IS NOT NULL ORDER BY 1")
        #expect(refunds.map { $0[0] } == ["2000000000000002", "2000000000000004"])
        let notifications = try world.rows(
            store, "SELECT notification_type, verification FROM notifications ORDER BY 1")
        #expect(notifications.count == 5)
        #expect(notifications.allSatisfy { $0[1] == "verified" })
        let apiSightings = try world.rows(
            store, "SELECT COUNT(*) FROM sightings WHERE source_kind = 'api' AND source_name = 'apple'")
        #expect(apiSightings.first?.first == "7")
        #expect(world.fake.rejectedTokens.isEmpty)
    }

    @Test func aRerunPullsNothingNewAndDuplicatesNothing() throws {
        let world = try Self.populated()
        let config = try world.config(environments: "[Production]")
        let store = try world.openStore(config)
        try world.credit(store, Self.credited, runID: 0)
        _ = try Self.pull(world, config, store)
        let first = try world.fingerprint(store)
        let requestsAfterFirst = world.fake.requestCount
        let second = try Self.pull(world, config, store)
        #expect(try world.fingerprint(store) == first)
        #expect(second.counts.inserted == 0)
        #expect(second.historyPages == 0)  // every credited transaction is verified now
        // Refunds and notifications resume from their watermarks: one call each, nothing new.
        #expect(second.refundTransactions == 0)
        #expect(world.fake.requestCount - requestsAfterFirst == second.calls)
        let revisions = world.fake.servedPaths.suffix(second.calls)
        #expect(revisions.allSatisfy { !$0.contains("/history/") })
    }

    @Test func survivesInjectedFaultsWithNothingLostOrDuplicated() throws {
        let clean = try Self.populated()
        let cleanConfig = try clean.config(environments: "[Production]")
        let cleanStore = try clean.openStore(cleanConfig)
        try clean.credit(cleanStore, Self.credited, runID: 0)
        _ = try Self.pull(clean, cleanConfig, cleanStore)

        let world = try Self.populated()
        let config = try world.config(environments: "[Production]")
        let store = try world.openStore(config)
        try world.credit(store, Self.credited, runID: 0)
        world.fake.inject(.status(500, errorCode: 5_000_000), on: "/history/")
        world.fake.inject(.tooManyRequests(retryAfter: "1"), on: "/history/")
        world.fake.inject(.truncated, on: "/history/")
        world.fake.inject(.malformedJSON, on: "/refund/")
        world.fake.inject(.wrongShape, on: "/refund/")
        world.fake.inject(.slow(2), on: "/notifications/")
        world.fake.inject(.drop, on: "/notifications/")
        world.fake.inject(.status(404, errorCode: 4_040_006), on: "/history/")
        world.fake.inject(.status(500, errorCode: 5_000_001), on: "/refund/")
        let sleeps = SleepRecorder()
        let summary = try Self.pull(world, config, store, sleeps: sleeps)

        #expect(summary.errors.isEmpty, "\(summary.errors)")
        #expect(summary.left.isEmpty, "\(summary.left)")
        #expect(summary.attempts == summary.calls + 9)
        #expect(sleeps.recorded.contains(1.0))  // Retry-After honoured
        #expect(sleeps.recorded.filter { $0 != 1.0 }.allSatisfy { $0 <= 0.005 })
        // Same rows as the fault-free pull, except sighting ids are content hashes of the same payloads.
        #expect(
            try world.rows(store, "SELECT COUNT(*) FROM apple_transaction WHERE verification = 'verified'") == [["10"]])
        let counts = { (w: NetworkTestWorld, s: SQLiteStore) in
            try w.rows(
                s,
                "SELECT (SELECT COUNT(*) FROM apple_sighting), (SELECT COUNT(*) FROM notification), (SELECT COUNT(*) FROM quarantine), (SELECT COUNT(*) FROM apple_transaction WHERE revocation_date IS NOT NULL)"
            )
        }
        #expect(try counts(world, store) == counts(clean, cleanStore))
        #expect(try world.rows(store, "SELECT COUNT(*) FROM quarantine").first?.first == "0")
    }

    @Test func failedCallsKeepTheWatermarkAndTheNextRunResumes() throws {
        let world = try Self.populated()
        let config = try world.config(
            environments: "[Production]", pull: "{notifications: false, refund_history: false}")
        let store = try world.openStore(config)
        try world.credit(store, [Self.credited[0]], runID: 0)
        // One credited transaction; its history call fails on every attempt (6 with this config).
        for _ in 0..<6 { world.fake.inject(.status(503, errorCode: nil), on: "/history/") }
        let first = try Self.pull(world, config, store)
        #expect(!first.errors.isEmpty)
        #expect(first.historyPages == 0)
        #expect(
            try PullWatermark.load(store, source: "apple", key: "history/com.example.coins/Production/2000000000000001")
                == nil)
        let second = try Self.pull(world, config, store)
        #expect(second.errors.isEmpty)
        #expect(second.historyTransactions == 5)
        let mark = try #require(
            try PullWatermark.load(store, source: "apple", key: "history/com.example.coins/Production/2000000000000001")
        )
        #expect(mark.revision == "rev-5")
        #expect(try world.rows(store, "SELECT COUNT(*) FROM apple_sighting").first?.first == "5")
    }

    @Test func watermarksMoveOnlyAfterTheDataIsCommitted() throws {
        let world = try Self.populated()
        let config = try world.config(
            environments: "[Production]", pull: "{notifications: false, refund_history: false}")
        let sqlite = try world.openStore(config)
        // Only the last transaction is credited: pages 1 and 2 do not verify it, so the rerun resumes its key.
        try world.credit(sqlite, [Self.credited[4]], runID: 0)
        let failing = FailingStore(sqlite, failOnWrite: 2)
        let runID = try sqlite.beginRun(
            RunStart(startedAt: 0, windowSince: nil, windowUntil: nil, configHash: "t", toolVersion: "t"))
        #expect(throws: FailingStore.Crash.self) {
            _ = try world.puller(config).pull(store: failing, runID: runID)
        }
        // Page 1 was committed and its revision saved; page 2's write failed, so the revision is page 1's.
        let key = "history/com.example.coins/Production/2000000000000005"
        #expect(try PullWatermark.load(sqlite, source: "apple", key: key)?.revision == "rev-2")
        #expect(try world.rows(sqlite, "SELECT COUNT(*) FROM apple_sighting").first?.first == "2")
        let summary = try Self.pull(world, config, sqlite)
        #expect(summary.historyTransactions == 3)
        #expect(try PullWatermark.load(sqlite, source: "apple", key: key)?.revision == "rev-5")
        #expect(try world.rows(sqlite, "SELECT COUNT(*) FROM apple_sighting").first?.first == "5")
    }

    @Test func theCallBudgetBoundsARunAndSaysWhatWasLeft() throws {
        let world = try Self.populated()
        let config = try world.config(
            environments: "[Production]", maxCalls: 3,
            pull: "{notification_types: [REFUND, REVOKE, REFUND_REVERSED, REFUND_DECLINED, CONSUMPTION_REQUEST]}")
        let store = try world.openStore(config)
        try world.credit(store, Self.credited, runID: 0)
        var summaries: [ApplePullSummary] = []
        for _ in 0..<12 {
            let summary = try Self.pull(world, config, store)
            #expect(summary.calls <= 3)
            #expect(summary.errors.isEmpty)
            summaries.append(summary)
        }
        // A steady state needs at least 5 calls (one per notification type): every run leaves some.
        #expect(summaries.allSatisfy { !$0.left.isEmpty })
        #expect(summaries.first?.text.contains("left for the next run") == true)
        let notifications = try world.rows(store, "SELECT COUNT(*) FROM notification").first?.first
        #expect(notifications == "5")
        #expect(
            try world.rows(
                store, "SELECT COUNT(*) FROM transactions WHERE verification = 'verified' AND transaction_id LIKE '20%'"
            ).first?.first == "5")
        #expect(
            try world.rows(store, "SELECT COUNT(*) FROM transactions WHERE revocation_date IS NOT NULL").first?.first
                == "2")
    }

    @Test func transactionNotFoundTriesSandboxOnlyWhenTheAppAllowsIt() throws {
        let world = try NetworkTestWorld()
        let id = "3000000000000001"
        world.fake.addHistory(
            try world.signedTransaction(id, environment: .sandbox), transactionID: id, environment: .sandbox)

        let productionOnly = try world.config(
            environments: "[Production]", pull: "{notifications: false, refund_history: false}")
        let store = try world.openStore(productionOnly)
        try world.credit(store, [id], runID: 0)
        let summary = try Self.pull(world, productionOnly, store)
        #expect(summary.transactionsNotFound == [id])
        #expect(world.fake.servedPaths.allSatisfy { !$0.hasPrefix("/Sandbox") })
        #expect(try world.rows(store, "SELECT COUNT(*) FROM apple_sighting").first?.first == "0")
        // Not asked again within the recheck period.
        let again = try Self.pull(world, productionOnly, store)
        #expect(again.calls == 0)

        let both = try world.config(
            environments: "[Production, Sandbox]", pull: "{notifications: false, refund_history: false}")
        try FileManager.default.removeItem(at: both.storePath.deletingLastPathComponent())
        let fresh = try world.openStore(both)
        try world.credit(fresh, [id], runID: 0)
        let found = try Self.pull(world, both, fresh)
        #expect(found.transactionsNotFound.isEmpty)
        #expect(world.fake.servedPaths.contains("/Sandbox/inApps/v2/history/\(id)"))
        #expect(
            try world.rows(fresh, "SELECT environment, verification FROM transactions") == [["Sandbox", "verified"]])
    }

    @Test func forgedIDsAreNeverSentToApple() throws {
        let world = try NetworkTestWorld()
        let config = try world.config(pull: "{notifications: false, refund_history: false}")
        let store = try world.openStore(config)
        try world.credit(store, ["com.urus.iap.1234", "../../etc/passwd"], runID: 0)
        let summary = try Self.pull(world, config, store)
        #expect(summary.calls == 0)
        #expect(world.fake.requestCount == 0)
    }

    /// A page of Apple's own API whose records fail verification, cannot be read, or belong to another app or
    /// environment is not stored and its call fails (an error of the run): its watermark stays, so once Apple
    /// answers correctly the next run stores the page, and no broken copy is left to pass for a forgery.
    @Test func anUntrustedOrUnreadablePageIsNotStoredAndTheNextRunAsksAgain() throws {
        let world = try NetworkTestWorld()
        let other = try TestSigningChain.generate()
        let id = "4000000000000001"
        let forged = try other.sign(
            payload: JSONSerialization.data(withJSONObject: [
                "transactionId": id, "bundleId": NetworkTestWorld.bundleID, "environment": "Production",
                "signedDate": NetworkTestWorld.t0, "productId": "com.example.coins.pack6",
                "purchaseDate": NetworkTestWorld.t0,
            ]))
        world.fake.addHistory(forged, transactionID: id, environment: .production)
        world.fake.addHistory("not-a-jws", transactionID: id, environment: .production)
        let config = try world.config(
            environments: "[Production]", pull: "{notifications: false, refund_history: false}")
        let store = try world.openStore(config)
        try world.credit(store, [id], runID: 0)
        let broken = try Self.pull(world, config, store)
        #expect(broken.errors.contains { $0.contains("could not be read; the page is not stored") })
        #expect(try world.rows(store, "SELECT COUNT(*) FROM sightings").first?.first == "0")
        #expect(try world.rows(store, "SELECT COUNT(*) FROM quarantine").first?.first == "0")

        world.fake.clearHistories()
        world.fake.addHistory(forged, transactionID: id, environment: .production)
        let untrusted = try Self.pull(world, config, store)
        #expect(
            untrusted.errors.contains { $0.contains("failed verification (chain-untrusted); the page is not stored") })
        #expect(try world.rows(store, "SELECT COUNT(*) FROM sightings").first?.first == "0")

        world.fake.clearHistories()
        let sandbox = try world.signedTransaction(id, environment: .sandbox, purchaseDate: NetworkTestWorld.t0)
        world.fake.addHistory(sandbox, transactionID: id, environment: .production)
        let misrouted = try Self.pull(world, config, store)
        #expect(misrouted.errors.contains { $0.contains("the page is not stored") })
        #expect(try world.rows(store, "SELECT COUNT(*) FROM sightings").first?.first == "0")

        world.fake.clearHistories()
        world.fake.addHistory(
            try world.signedTransaction(id, purchaseDate: NetworkTestWorld.t0), transactionID: id,
            environment: .production)
        let fixed = try Self.pull(world, config, store)
        #expect(fixed.errors.isEmpty)
        #expect(
            try world.rows(store, "SELECT transaction_id, verification FROM transactions") == [[id, "verified"]])
    }

    /// An answer that keeps promising more pages without progress (the same revision, no records) fails its
    /// call after a page or two instead of spending the run's whole budget on one transaction.
    @Test func aHistoryThatPromisesMoreWithoutProgressFailsTheCallInsteadOfSpendingTheBudget() throws {
        let world = try Self.populated()
        let config = try world.config(
            environments: "[Production]", pull: "{notifications: false, refund_history: false}")
        let store = try world.openStore(config)
        try world.credit(store, ["2000000000000001"], runID: 0)
        for _ in 0..<200 { world.fake.inject(.stuck, on: "/history/") }
        let summary = try Self.pull(world, config, store)
        #expect(summary.errors.contains { $0.contains("no progress") })
        #expect(summary.calls <= 3)
        #expect(try world.rows(store, "SELECT COUNT(*) FROM transactions").first?.first == "0")
    }

    /// Empty pages that promise more, each with a new revision, fail the call after three; the revisions they
    /// gave were never confirmed by a page with items, so the next run starts where the last confirmed page
    /// ended and reads every transaction.
    @Test func emptyPagesThatFailTheCallLeaveTheRevisionWhereTheLastPageWithItemsPutIt() throws {
        let world = try Self.populated()
        let config = try world.config(
            environments: "[Production]", pull: "{notifications: false, refund_history: false}")
        let store = try world.openStore(config)
        try world.credit(store, ["2000000000000001"], runID: 0)
        for _ in 0..<3 { world.fake.inject(.emptyAdvancing, on: "/history/") }
        let first = try Self.pull(world, config, store)
        #expect(first.errors.contains { $0.contains("3 empty pages") }, "\(first.errors)")
        let key = "history/com.example.coins/Production/2000000000000001"
        #expect(try PullWatermark.load(store, source: "apple", key: key)?.revision == nil)
        let second = try Self.pull(world, config, store)
        #expect(second.errors.isEmpty, "\(second.errors)")
        #expect(second.historyTransactions == 5)
        #expect(try world.rows(store, "SELECT COUNT(*) FROM apple_sighting").first?.first == "5")
    }

    /// The same for notification history: the pagination tokens of empty pages are not saved, so the next
    /// run reads the window from its start and misses no notification.
    @Test func emptyNotificationPagesThatFailTheQueryLeaveNoTokenBehind() throws {
        let world = try Self.populated()
        let config = try world.config(
            environments: "[Production]", pull: "{transaction_history: false, refund_history: false}")
        let store = try world.openStore(config)
        for _ in 0..<3 { world.fake.inject(.emptyAdvancing, on: "/notifications/history") }
        let first = try Self.pull(world, config, store)
        #expect(first.errors.contains { $0.contains("3 empty pages") }, "\(first.errors)")
        #expect(first.notifications == 0)
        let second = try Self.pull(world, config, store)
        #expect(second.errors.isEmpty, "\(second.errors)")
        #expect(second.notifications == 5)
        #expect(try world.rows(store, "SELECT COUNT(*) FROM notification").first?.first == "5")
    }

    /// Pages whose revision leads back to an earlier page while promising more (A, B, A, …) fail the call as
    /// soon as a revision comes round again, instead of paging in a circle until the run's budget is spent.
    @Test func aHistoryWhosePagesRunInACircleFailsTheCallInsteadOfSpendingTheBudget() throws {
        let world = try Self.populated()
        let config = try world.config(
            environments: "[Production]", pull: "{notifications: false, refund_history: false}")
        let store = try world.openStore(config)
        try world.credit(store, ["2000000000000001"], runID: 0)
        for _ in 0..<100 {
            world.fake.inject(.pass, on: "/history/")
            world.fake.inject(.rewind, on: "/history/")
        }
        let summary = try Self.pull(world, config, store)
        #expect(summary.errors.contains { $0.contains("runs in a circle") }, "\(summary.errors)")
        #expect(summary.calls <= 4, "\(summary.calls) calls")
    }

    /// The same for notification history: a paginationToken that comes round again fails the query.
    @Test func aNotificationHistoryWhosePagesRunInACircleFailsTheQuery() throws {
        let world = try Self.populated()
        let config = try world.config(
            environments: "[Production]", pull: "{transaction_history: false, refund_history: false}")
        let store = try world.openStore(config)
        for _ in 0..<100 {
            world.fake.inject(.pass, on: "/notifications/history")
            world.fake.inject(.rewind, on: "/notifications/history")
        }
        let summary = try Self.pull(world, config, store)
        #expect(summary.errors.contains { $0.contains("runs in a circle") }, "\(summary.errors)")
        #expect(summary.calls <= 4, "\(summary.calls) calls")
    }

    /// Failures that alternate with successes never make three in a row, but ten failed calls stop the source
    /// for the run all the same: each may have waited out its timeout and retries.
    @Test func tenFailedCallsStopTheSourceEvenWhenNeverThreeInARow() throws {
        let world = try NetworkTestWorld()
        let config = try world.config(environments: "[Production]")
        let store = try world.openStore(config)
        let source = try #require(config.appStoreAPI.first)
        let session = ApplePullSession(
            source: source, store: store, runID: 1, verifier: try world.verifier(config), logger: world.logger,
            now: { NetworkTestWorld.t0 }, shouldStop: { false }, notificationOverlap: 0, notFoundRecheck: 0)
        for call in 1...10 {
            #expect(session.canCall, "stopped before call \(call)")
            session.failed("call \(call) failed")
            session.consecutiveFailures = 0  // a success in between
        }
        #expect(!session.canCall)
        #expect(session.outOfCalls == "10 calls failed this run")
    }

    /// A pull that stops early names the credited transactions it did not get to ask Apple about, with why
    /// (`unchecked_transactions`, which IAP-020 reads); once Apple answers, they are no longer named.
    @Test func aPullThatStopsEarlyNamesTheTransactionsItDidNotAskAbout() throws {
        let world = try Self.populated()
        let short = try world.config(
            environments: "[Production]", maxCalls: 2, pull: "{notifications: false, refund_history: false}")
        let store = try world.openStore(short)
        try world.credit(store, Self.credited, runID: 0)
        _ = try Self.pull(world, short, store)
        let unchecked = try world.rows(store, "SELECT transaction_id, reason FROM unchecked_transactions")
        #expect(unchecked.map { $0[0] } == ["2000000000000005"])
        #expect(unchecked.first?[1]?.contains("call budget spent") == true)

        let full = try world.config(
            environments: "[Production]", pull: "{notifications: false, refund_history: false}")
        _ = try Self.pull(world, full, store)
        #expect(try world.rows(store, "SELECT COUNT(*) FROM unchecked_transactions").first?.first == "0")
        #expect(try world.rows(store, "SELECT COUNT(*) FROM transactions").first?.first == "5")
    }

    /// What makes a page of signed transactions a broken answer: no progress (the revision asked for, or
    /// three empty pages in a row promising more, even with a new revision each time), or another app or
    /// environment than the one asked about.
    @Test func aBrokenPageIsToldFromAnHonestOne() {
        func page(_ revision: String, more: Bool, bundle: String? = "b", environment: String? = "Production")
            -> SignedTransactionPage
        {
            SignedTransactionPage(
                signedTransactions: [], revision: revision, hasMore: more, bundleID: bundle, environment: environment,
                appAppleID: nil)
        }
        func broken(_ p: SignedTransactionPage, asked: String?, empty: Int = 0) -> String? {
            ApplePullSession.brokenPage(
                p, askedRevision: asked, emptyPages: empty, bundle: "b", environment: .production)
        }
        #expect(broken(page("r2", more: true), asked: "r1", empty: 1) == nil)
        #expect(broken(page("r3", more: false), asked: "r2") == nil)
        #expect(broken(page("r1", more: true), asked: "r1")?.contains("same revision") == true)
        #expect(broken(page("r4", more: true), asked: "r3", empty: 3)?.contains("3 empty pages") == true)
        #expect(broken(page("r2", more: false, bundle: "other"), asked: "r1")?.contains("bundle other") == true)
        #expect(broken(page("r2", more: false, environment: "Sandbox"), asked: "r1")?.contains("Sandbox") == true)
    }

    @Test func theKeyAndTheTokensNeverAppearInLogs() throws {
        let world = try Self.populated()
        let config = try world.config(environments: "[Production]")
        let store = try world.openStore(config)
        try world.credit(store, Self.credited, runID: 0)
        world.fake.inject(.status(500, errorCode: nil), on: "/history/")
        world.fake.inject(.tooManyRequests(retryAfter: "0"), on: "/notifications/")
        _ = try Self.pull(world, config, store)
        let logs = world.logs.text
        #expect(logs.contains("retrying request"))
        let pem = world.apiKey.pemRepresentation
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }
        #expect(!body.isEmpty)
        for line in body { #expect(!logs.contains(line)) }
        #expect(!logs.contains("Bearer"))
        #expect(!logs.contains("eyJ"))  // no base64url JSON (a JWT header) at all
        #expect(!logs.contains(world.apiKey.rawRepresentation.base64EncodedString()))
    }

    @Test func anExpiredTokenIsRejectedByTheFake() throws {
        let world = try NetworkTestWorld()
        let signer = AppStoreJWTSigner(
            issuerID: world.fake.issuerID, keyID: world.fake.keyID, bundleID: NetworkTestWorld.bundleID,
            privateKey: world.apiKey)
        let stale = try signer.token(now: Date(timeIntervalSinceNow: -3600))
        let fresh = try signer.token()
        let client = URLSessionHTTPClient()
        let url = world.fake.baseURL(.production).appendingPathComponent("inApps/v1/lookup/X1")
        let rejected = try client.send(HTTPRequest(url: url, headers: ["Authorization": "Bearer \(stale)"]), timeout: 5)
        #expect(rejected.status == 401)
        let accepted = try client.send(HTTPRequest(url: url, headers: ["Authorization": "Bearer \(fresh)"]), timeout: 5)
        #expect(accepted.status == 200)
        #expect(world.fake.rejectedTokens == ["expired or too long-lived"])
    }

    @Test func orderLookupReturnsTheOrdersSignedTransactions() throws {
        let world = try NetworkTestWorld()
        let signed = try world.signedTransaction("5000000000000001")
        world.fake.addOrder("MQ8KX2Z9", signed: [signed])
        let signer = AppStoreJWTSigner(
            issuerID: world.fake.issuerID, keyID: world.fake.keyID, bundleID: NetworkTestWorld.bundleID,
            privateKey: world.apiKey)
        let client = AppStoreServerAPIClient(
            environment: .production, baseURL: world.fake.baseURL(.production), signer: signer,
            http: ResilientHTTPClient(client: URLSessionHTTPClient(), timeout: 5, logger: world.logger))
        let found = try client.lookUpOrder(orderID: "MQ8KX2Z9")
        #expect(found.isValid)
        #expect(found.signedTransactions == [signed])
        let missing = try client.lookUpOrder(orderID: "NOPE/../1")
        #expect(!missing.isValid)
        #expect(world.fake.servedPaths.last == "/Production/inApps/v1/lookup/NOPE/../1")
    }
}

extension ApplePullerTests {
    @Test func anUnreachableAPIStopsTheSourceAfterThreeFailedCalls() throws {
        let world = try Self.populated()
        let config = try world.config(environments: "[Production]")
        let store = try world.openStore(config)
        try world.credit(store, Self.credited, runID: 0)
        world.fake.stop()
        let summary = try Self.pull(world, config, store)
        #expect(summary.calls == 3)
        #expect(summary.attempts == 18)  // 6 attempts each
        #expect(summary.errors.count == 3)
        #expect(summary.left.contains { $0.contains("3 calls in a row failed") })
        #expect(try world.rows(store, "SELECT COUNT(*) FROM file_state WHERE size = -1") == [["0"]])
    }

    @Test func orderLookupReportsOnlyVerifiedTransactionIDs() throws {
        let world = try NetworkTestWorld()
        let forged = try TestSigningChain.generate().sign(
            payload: JSONSerialization.data(withJSONObject: [
                "transactionId": "6000000000000009", "bundleId": NetworkTestWorld.bundleID, "environment": "Production",
                "signedDate": NetworkTestWorld.t0,
            ]))
        world.fake.addOrder("MK5TTTVWJH", signed: [try world.signedTransaction("6000000000000001"), forged])
        let config = try world.config(environments: "[Production]")
        let lookup = try AppStoreOrderLookup(config: config, verifier: try world.verifier(config), logger: world.logger)
        let answer = try lookup.verifiedTransactionIDs(forOrderID: "MK5TTTVWJH")
        #expect(answer == .init(status: 0, transactionIDs: ["6000000000000001"], unverified: 1))
        #expect(try lookup.verifiedTransactionIDs(forOrderID: "UNKNOWN1").status == 1)
        #expect(world.fake.servedPaths.allSatisfy { $0.hasPrefix("/Production/") })
    }

    @Test func supportLookupByAppleOrderIDAsksAppleThenAnswersFromTheStore() throws {
        let world = try NetworkTestWorld()
        world.fake.addOrder("MK5TTTVWJH", signed: [try world.signedTransaction("6000000000000001")])
        let config = try world.config(environments: "[Production]")
        let store = try world.openStore(config)
        try world.credit(store, ["6000000000000001"], runID: 0)
        let adapter = try #require(
            AppStoreOrderLookupAdapter(config: config, verifier: try world.verifier(config), logger: world.logger))
        let service = LookupService(store: store, appleOrderLookup: adapter, now: NetworkTestWorld.t0 + 86_400_000)
        let result = try service.lookup(LookupQuery(id: "MK5TTTVWJH", kind: .appleOrder))
        #expect(result.query.matches.map(\.kind) == [.appleOrder])
        #expect(result.found)
        #expect(world.fake.servedPaths.contains { $0.hasSuffix("inApps/v1/lookup/MK5TTTVWJH") })
        let unknown = try service.lookup(LookupQuery(id: "NOSUCHORDER", kind: .appleOrder))
        #expect(!unknown.found)
    }

    @Test func noAppleOrderLookupWithoutAnAppStoreAPISource() throws {
        let world = try NetworkTestWorld()
        var config = try world.config(environments: "[Production]")
        config.appStoreAPI = []
        #expect(AppStoreOrderLookupAdapter(config: config, verifier: UncheckedVerifier(), logger: world.logger) == nil)
    }
}

/// A store whose `write` throws on the n-th call (a crash between pages).
final class FailingStore: PurchaseStore {
    struct Crash: Error {}
    let base: SQLiteStore
    let failOnWrite: Int
    private var writes = 0

    init(_ base: SQLiteStore, failOnWrite: Int) {
        self.base = base
        self.failOnWrite = failOnWrite
    }

    func migrate() throws { try base.migrate() }
    var location: String { base.location }
    func acquireRunLock() throws -> AnyObject { try base.acquireRunLock() }
    func beginRun(_ start: RunStart) throws -> Int64 { try base.beginRun(start) }
    func finishRun(_ runID: Int64, status: String, finishedAt: Int64, summaryJSON: String?) throws {
        try base.finishRun(runID, status: status, finishedAt: finishedAt, summaryJSON: summaryJSON)
    }
    func removeQuarantined(sourceName: String, fileName: String, notSeenIn runID: Int64) throws {
        try base.removeQuarantined(sourceName: sourceName, fileName: fileName, notSeenIn: runID)
    }
    func replaceReferenceData(_ data: ReferenceData) throws { try base.replaceReferenceData(data) }
    func write(_ batch: IngestBatch, runID: Int64) throws -> WriteCounts {
        writes += 1
        if writes == failOnWrite { throw Crash() }
        return try base.write(batch, runID: runID)
    }
    func recordSourceCounts(runID: Int64, sourceName: String, sourceKind: String, counts: WriteCounts) throws {
        try base.recordSourceCounts(runID: runID, sourceName: sourceName, sourceKind: sourceKind, counts: counts)
    }
    func fileState(sourceName: String, path: String) throws -> FileState? {
        try base.fileState(sourceName: sourceName, path: path)
    }
    func setFileState(_ state: FileState, sourceName: String, runID: Int64) throws {
        try base.setFileState(state, sourceName: sourceName, runID: runID)
    }
    func setUncheckedTransactions(_ transactionIDs: [String], reason: String, sourceName: String, runID: Int64) throws {
        try base.setUncheckedTransactions(transactionIDs, reason: reason, sourceName: sourceName, runID: runID)
    }
    func setUnchecked(_ transactionID: String, reason: String?, sourceName: String, runID: Int64) throws {
        try base.setUnchecked(transactionID, reason: reason, sourceName: sourceName, runID: runID)
    }
    func query(_ sql: String, parameters: [String: SQLValue], _ body: ([String], [SQLValue]) throws -> Void) throws {
        try base.query(sql, parameters: parameters, body)
    }
    func inTransaction<T>(_ body: () throws -> T) throws -> T { try base.inTransaction(body) }
}
