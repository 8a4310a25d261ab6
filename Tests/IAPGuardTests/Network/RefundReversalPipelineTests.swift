import Foundation
import Testing

@testable import IAPGuard

/// A refund Apple took back is not reported, whichever arrives first — the refund, the reversal or a newer
/// copy of the transaction — from files or from the App Store Server API, over incremental runs.
@Suite struct RefundReversalPipelineTests {
    static let day: Int64 = 86_400_000
    static let tx = "2000000000000007"

    /// The signed pieces of one refunded-then-reversed purchase, dated from now.
    struct Story {
        let refund: String
        let reversal: String
        let resigned: String
        let purchase: String
        let refundedAt: Int64

        init(_ world: NetworkTestWorld, now: Int64) throws {
            let bought = now - 10 * RefundReversalPipelineTests.day
            refundedAt = now - 8 * RefundReversalPipelineTests.day
            let reversedAt = now - 6 * RefundReversalPipelineTests.day
            let tx = RefundReversalPipelineTests.tx
            purchase = try world.signedTransaction(tx, purchaseDate: bought, signedDate: bought + 1000)
            refund = try world.signedNotification(
                uuid: "00000000-0000-4000-8000-0000000000a1", type: "REFUND", signedDate: refundedAt,
                transaction: try world.signedTransaction(
                    tx, purchaseDate: bought, revocationDate: refundedAt, signedDate: refundedAt))
            reversal = try world.signedNotification(
                uuid: "00000000-0000-4000-8000-0000000000a2", type: "REFUND_REVERSED", signedDate: reversedAt,
                transaction: try world.signedTransaction(tx, purchaseDate: bought, signedDate: reversedAt))
            // What Apple's transaction history answers a day later: re-signed, no revocation.
            resigned = try world.signedTransaction(
                tx, purchaseDate: bought, signedDate: now - RefundReversalPipelineTests.day)
        }
    }

    /// Runs the whole job (files only; the API pull is off) and returns the open IAP-015 findings.
    static func run(
        _ world: NetworkTestWorld, notifications: [String], transactions: [String], pull: String,
        clawedBack: Bool = false, byOrder: Bool = false, clawedUnits: Int = 600
    ) throws -> (open: [String], store: SQLiteStore) {
        let data = world.directory.appendingPathComponent("data")
        try Data(notifications.map { "{\"signedPayload\": \"\($0)\"}\n" }.joined().utf8).write(
            to: data.appendingPathComponent("notifications.jsonl"))
        try Data(transactions.map { "\($0)\n" }.joined().utf8).write(
            to: data.appendingPathComponent("transactions.jsonl"))
        // The ledger names the transaction, or (byOrder) only the order, which names the transaction.
        let reference = byOrder ? "\"order_id\": \"o-1\"" : "\"transaction_id\": \"\(tx)\""
        var credit =
            "{\"credit_id\": \"c1\", \(reference), \"user_id\": \"u-1\", \"product_id\": \"\(NetworkTestWorld.product)\", \"units\": 600, \"credited_at\": \(NetworkTestWorld.t0)}\n"
        try Data(
            "order_id,user_id,transaction_id,price,currency,created_at\no-1,u-1,\(tx),0.99,USD,\(NetworkTestWorld.t0)\n"
                .utf8
        ).write(
            to: data.appendingPathComponent("orders.csv"))
        if clawedBack {
            // An append-only ledger's clawback: a row of its own with negative units.
            credit +=
                "{\"credit_id\": \"c1-back\", \"transaction_id\": \"\(tx)\", \"user_id\": \"u-1\", \"units\": -\(clawedUnits), \"credited_at\": \(Clock.nowMillis() - day), \"reversal_reason\": \"refund\"}\n"
        }
        try Data(credit.utf8).write(to: data.appendingPathComponent("credits.jsonl"))
        let config = try world.config(
            environments: "[Production]", pull: pull,
            sources: [
                "{name: credits, kind: credits, path: data/credits.jsonl}",
                "{name: orders, kind: orders, format: csv, path: data/orders.csv}",
                "{name: signed, kind: signed-transactions, path: data/transactions.jsonl}",
                "{name: asn2, kind: notifications, path: data/notifications.jsonl}",
            ])
        let summary = try Pipeline(config: config, verifier: try world.verifier(config), logger: world.logger).run(
            Pipeline.Options(failOn: nil))
        #expect(summary.errors.isEmpty, "\(summary.errors)")
        let store = try SQLiteStore(path: config.storePath.path)
        let open = try world.rows(
            store, "SELECT transaction_id FROM findings WHERE rule_id = 'IAP-015' AND status <> 'resolved'"
        ).map { $0[0] ?? "" }
        return (open, store)
    }

    static let filesOnly = "{notifications: false, transaction_history: false, refund_history: false}"

    static func revocation(_ world: NetworkTestWorld, _ store: SQLiteStore) throws -> String? {
        try world.rows(store, "SELECT revocation_date FROM transactions WHERE transaction_id = '\(tx)'").first?.first
            ?? nil
    }

    @Test(arguments: [false, true])
    func fromFilesTheRefundAndItsReversalInEitherOrder(reversalFirst: Bool) throws {
        let world = try NetworkTestWorld()
        let story = try Story(world, now: Clock.nowMillis())
        // Run 1: the refund alone is a finding.
        let first = try Self.run(
            world, notifications: reversalFirst ? [story.reversal] : [story.refund], transactions: [story.purchase],
            pull: Self.filesOnly)
        #expect(first.open == (reversalFirst ? [] : [Self.tx]))
        // Run 2 (incremental): the other one arrives; the refund is reversed.
        let second = try Self.run(
            world, notifications: [story.refund, story.reversal], transactions: [story.purchase], pull: Self.filesOnly)
        #expect(second.open.isEmpty)
        #expect(try Self.revocation(world, second.store) == nil)
        #expect(
            try world.rows(
                second.store, "SELECT COUNT(*) FROM refunds WHERE event_id = 'transaction:\(Self.tx)'") == [["0"]])
    }

    /// A ledger that names only the order: the refunded purchase's credit is still found, and reported while
    /// it stands.
    @Test func fromFilesARefundedCreditNamingOnlyItsOrderIsReported() throws {
        let world = try NetworkTestWorld()
        let story = try Story(world, now: Clock.nowMillis())
        let run = try Self.run(
            world, notifications: [story.refund], transactions: [story.purchase], pull: Self.filesOnly, byOrder: true)
        #expect(run.open == [Self.tx])
    }

    /// A refund settled by a clawback ledger row is not reported, whether the row comes in the run after the
    /// refund or before it.
    @Test(arguments: [false, true])
    func fromFilesAClawbackLedgerRowSettlesTheRefund(clawbackFirst: Bool) throws {
        let world = try NetworkTestWorld()
        let story = try Story(world, now: Clock.nowMillis())
        let first = try Self.run(
            world, notifications: clawbackFirst ? [] : [story.refund], transactions: [story.purchase],
            pull: Self.filesOnly, clawedBack: clawbackFirst)
        #expect(first.open == (clawbackFirst ? [] : [Self.tx]))
        let second = try Self.run(
            world, notifications: [story.refund], transactions: [story.purchase], pull: Self.filesOnly,
            clawedBack: true)
        #expect(second.open.isEmpty)
        #expect(
            try world.rows(second.store, "SELECT reversal_reason FROM credits WHERE credit_id = 'c1'")
                == [["refund (ledger row c1-back)"]])
    }

    /// A clawback ledger row that takes back part of the units leaves the credit standing: the refund is
    /// still reported, for what was kept, as soon as the row arrives (an incremental run).
    @Test func fromFilesAPartialClawbackLedgerRowLeavesOnlyWhatWasKept() throws {
        let world = try NetworkTestWorld()
        let story = try Story(world, now: Clock.nowMillis())
        let first = try Self.run(
            world, notifications: [story.refund], transactions: [story.purchase], pull: Self.filesOnly)
        #expect(first.open == [Self.tx])
        let second = try Self.run(
            world, notifications: [story.refund], transactions: [story.purchase], pull: Self.filesOnly,
            clawedBack: true, clawedUnits: 200)
        #expect(second.open == [Self.tx])
        #expect(
            try world.rows(
                second.store,
                "SELECT observed FROM findings WHERE rule_id = 'IAP-015' AND status <> 'resolved'") == [["400"]])
        #expect(try world.rows(second.store, "SELECT reversed_at FROM credits WHERE credit_id = 'c1'") == [[nil]])
    }

    @Test(arguments: [false, true])
    func fromFilesANewerCopyWithoutTheRevocationReversesTheRefund(copyFirst: Bool) throws {
        let world = try NetworkTestWorld()
        let story = try Story(world, now: Clock.nowMillis())
        _ = try Self.run(
            world, notifications: copyFirst ? [] : [story.refund],
            transactions: copyFirst ? [story.purchase, story.resigned] : [story.purchase], pull: Self.filesOnly)
        let second = try Self.run(
            world, notifications: [story.refund], transactions: [story.purchase, story.resigned], pull: Self.filesOnly)
        #expect(second.open.isEmpty)
        #expect(try Self.revocation(world, second.store) == nil)
        let latest = try world.rows(
            second.store,
            """
            SELECT event_type, origin FROM refunds WHERE transaction_id = '\(Self.tx)'
            ORDER BY event_date DESC LIMIT 1
            """)
        #expect(latest == [["REFUND_REVERSED", "transaction"]])
    }

    /// From the API alone, with the clock moving between runs: the refund notification, then in a later
    /// run the reversal; and the other way round — a re-signed copy from transaction history first, then
    /// the refund notification from a backfill of its days.
    @Test(arguments: [false, true])
    func fromThePullTheRefundAndWhatReversedItInEitherOrder(copyFirst: Bool) throws {
        let world = try NetworkTestWorld()
        let base = Clock.nowMillis() - 20 * Self.day
        let bought = base - 2 * Self.day
        let refunded = base
        let reversed = base + 3 * Self.day
        let refund = try world.signedNotification(
            uuid: "00000000-0000-4000-8000-0000000000b1", type: "REFUND", signedDate: refunded,
            transaction: try world.signedTransaction(
                Self.tx, purchaseDate: bought, revocationDate: refunded, signedDate: refunded))
        let reversal = try world.signedNotification(
            uuid: "00000000-0000-4000-8000-0000000000b2", type: "REFUND_REVERSED", signedDate: reversed,
            transaction: try world.signedTransaction(Self.tx, purchaseDate: bought, signedDate: reversed))
        let resigned = try world.signedTransaction(Self.tx, purchaseDate: bought, signedDate: reversed + 1000)
        let config = try world.config(environments: "[Production]", pull: "{refund_history: false}")
        let store = try world.openStore(config)
        try world.credit(store, [Self.tx], runID: 0)
        func pull(at now: Int64, since: Int64? = nil) throws {
            var puller = try world.puller(config)
            puller.now = { now }
            let runID = try store.beginRun(
                RunStart(startedAt: now, windowSince: since, windowUntil: now, configHash: "t", toolVersion: "t"))
            let summary = try #require(
                try puller.pull(store: store, runID: runID, window: .init(since: since, until: now)).first)
            #expect(summary.errors.isEmpty, "\(summary.errors)")
        }
        if copyFirst {
            world.fake.addHistory(resigned, transactionID: Self.tx, environment: .production)
            try pull(at: reversed + 3_600_000)
            world.fake.addNotification(
                .init(signedDate: refunded, type: "REFUND", signedPayload: refund), environment: .production)
            try pull(at: reversed + 7_200_000, since: refunded - Self.day)
        } else {
            world.fake.addHistory(
                try world.signedTransaction(Self.tx, purchaseDate: bought, signedDate: bought + 1000),
                transactionID: Self.tx, environment: .production)
            world.fake.addNotification(
                .init(signedDate: refunded, type: "REFUND", signedPayload: refund), environment: .production)
            try pull(at: refunded + 3_600_000)
            #expect(try Self.revocation(world, store) == String(refunded))
            world.fake.addNotification(
                .init(signedDate: reversed, type: "REFUND_REVERSED", signedPayload: reversal), environment: .production)
            try pull(at: reversed + 3_600_000)
        }
        #expect(try Self.revocation(world, store) == nil)
        #expect(
            try world.rows(store, "SELECT COUNT(*) FROM notifications WHERE notification_type = 'REFUND'") == [["1"]])
        let latest = try world.rows(
            store,
            """
            SELECT event_type FROM refunds WHERE transaction_id = '\(Self.tx)'
            ORDER BY event_date DESC, CASE event_type WHEN 'REFUND_REVERSED' THEN 0 ELSE 1 END LIMIT 1
            """)
        #expect(latest == [["REFUND_REVERSED"]])
    }

    /// From the API alone with both notifications in the window: the reversal is applied.
    @Test func fromThePullARefundAndItsReversal() throws {
        let world = try NetworkTestWorld()
        let now = Clock.nowMillis()
        let story = try Story(world, now: now)
        world.fake.addHistory(story.purchase, transactionID: Self.tx, environment: .production)
        world.fake.addNotification(
            .init(signedDate: now - 6 * Self.day, type: "REFUND_REVERSED", signedPayload: story.reversal),
            environment: .production)
        world.fake.addNotification(
            .init(signedDate: story.refundedAt, type: "REFUND", signedPayload: story.refund), environment: .production)
        let result = try Self.run(world, notifications: [], transactions: [], pull: "{refund_history: false}")
        #expect(try Self.revocation(world, result.store) == nil)
        #expect(result.open.isEmpty)
    }
}
