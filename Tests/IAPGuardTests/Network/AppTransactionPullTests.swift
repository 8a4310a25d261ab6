import Foundation
import Testing

@testable import IAPGuard
@testable import IAPGuardTesting

/// Get App Transaction Info in the pull: off unless configured; the credited, verified transactions without
/// an `appTransactionId` are asked about in id order from a cursor (new ones as they come, all again a week
/// on); only a verified app transaction of this app and environment is stored; the calls stay inside their
/// own cap and the source's budget.
@Suite("App transaction info in the pull")
struct AppTransactionPullTests {
    static let credited = ["2300000000000001", "2300000000000002", "2300000000000003"]

    static func signedAppTransaction(
        _ world: NetworkTestWorld, id: String, by chain: TestSigningChain? = nil, receiptType: String = "Production",
        bundle: String = NetworkTestWorld.bundleID
    ) throws -> String {
        let payload: [String: Any] = [
            "appTransactionId": id, "bundleId": bundle, "receiptType": receiptType, "appAppleId": 42,
            "originalPurchaseDate": NetworkTestWorld.t0 - 86_400_000, "originalPlatform": "iOS",
            "signedDate": NetworkTestWorld.t0 + 86_400_000, "originalApplicationVersion": "1.0",
            "applicationVersion": "2.0",
        ]
        return try (chain ?? world.chain).sign(
            payload: JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys]))
    }

    /// Three credited transactions in Apple's history: the first has a genuine app transaction, the second one
    /// signed by an impostor chain, the third none.
    static func world() throws -> NetworkTestWorld {
        let world = try NetworkTestWorld(pageSize: 5)
        for id in credited {
            world.fake.addHistory(
                try world.signedTransaction(id), transactionID: id, environment: .production, customer: id)
        }
        world.fake.addAppTransaction(
            try signedAppTransaction(world, id: "704289572311800001"), transactionID: credited[0],
            environment: .production)
        world.fake.addAppTransaction(
            try signedAppTransaction(world, id: "704289572311800002", by: try TestSigningChain.generate()),
            transactionID: credited[1], environment: .production)
        return world
    }

    static func stored(_ world: NetworkTestWorld, _ store: SQLiteStore) throws -> [String] {
        try world.rows(store, "SELECT transaction_id, app_transaction_id FROM transactions ORDER BY 1").map {
            "\($0[0] ?? "")=\($0[1] ?? "NULL")"
        }
    }

    static func asked(_ world: NetworkTestWorld) -> [String] {
        world.fake.servedPaths.filter { $0.contains("/appTransactions/") }.compactMap {
            $0.split(separator: "/").last.map(String.init)
        }
    }

    @Test func aVerifiedAppTransactionIsStoredAgainstItsTransactionAndOnlyThat() throws {
        let world = try Self.world()
        let config = try world.config(
            environments: "[Production]",
            pull: "{notifications: false, refund_history: false, app_transaction_info: true}")
        let store = try world.openStore(config)
        try world.credit(store, Self.credited, runID: 0)
        let summary = try ApplePullerTests.pull(world, config, store)

        #expect(summary.appTransactions == 1)
        #expect(
            try Self.stored(world, store) == [
                "2300000000000001=704289572311800001", "2300000000000002=NULL", "2300000000000003=NULL",
            ])
        #expect(summary.errors.count == 1 && summary.errors[0].contains("did not verify"), "\(summary.errors)")
        #expect(Self.asked(world) == Self.credited)
        // The change is logged and marks the transaction changed in this run, for the incremental rules.
        #expect(
            try world.rows(store, "SELECT entity_key, field FROM change_log WHERE field = 'app_transaction_id'")
                == [["2300000000000001", "app_transaction_id"]])

        // Next run: nothing new, nothing asked. A transaction credited later is asked on its own.
        _ = try ApplePullerTests.pull(world, config, store)
        #expect(Self.asked(world) == Self.credited)
        let later = "2300000000000004"
        world.fake.addHistory(
            try world.signedTransaction(later), transactionID: later, environment: .production, customer: later)
        try world.credit(store, [later], runID: 0)
        _ = try ApplePullerTests.pull(world, config, store)
        #expect(Self.asked(world) == Self.credited + [later])

        // A week on, the cursor starts over: what Apple had none for, or did not verify, is asked again.
        let runID = try store.beginRun(
            RunStart(
                startedAt: Clock.nowMillis(), windowSince: nil, windowUntil: nil, configHash: "t", toolVersion: "t"))
        let weekOn = ApplePuller(
            config: config, verifier: try world.verifier(config), logger: world.logger, sleep: { _ in },
            now: { Clock.nowMillis() + 8 * 86_400_000 })
        _ = try weekOn.pull(store: store, runID: runID)
        #expect(Self.asked(world) == Self.credited + [later, Self.credited[1], Self.credited[2], later])
    }

    @Test func itIsOffUnlessConfigured() throws {
        let world = try Self.world()
        let config = try world.config(environments: "[Production]")
        let store = try world.openStore(config)
        try world.credit(store, Self.credited, runID: 0)
        let summary = try ApplePullerTests.pull(world, config, store)
        #expect(summary.historyTransactions == 3)
        #expect(Self.asked(world).isEmpty)
        #expect(try Self.stored(world, store).allSatisfy { $0.hasSuffix("=NULL") })
    }

    @Test func itsCallsStayWithinTheirCapAndWhatIsLeftIsSaid() throws {
        let world = try Self.world()
        let config = try world.config(
            environments: "[Production]",
            pull: "{notifications: false, refund_history: false, app_transaction_info: true, app_transaction_calls: 1}")
        let store = try world.openStore(config)
        try world.credit(store, Self.credited, runID: 0)
        let summary = try ApplePullerTests.pull(world, config, store)
        #expect(Self.asked(world) == [Self.credited[0]])
        #expect(summary.left.contains { $0.contains("app_transaction_calls reached") }, "\(summary.left)")
        // The next run goes on from there.
        _ = try ApplePullerTests.pull(world, config, store)
        #expect(Self.asked(world) == [Self.credited[0], Self.credited[1]])
    }

    @Test(arguments: [("Sandbox", NetworkTestWorld.bundleID), ("Production", "com.other.app")])
    func anAppTransactionOfAnotherEnvironmentOrAppIsNotStored(receiptType: String, bundle: String) throws {
        let world = try NetworkTestWorld(pageSize: 5)
        let id = Self.credited[0]
        world.fake.addHistory(try world.signedTransaction(id), transactionID: id, environment: .production)
        world.fake.addAppTransaction(
            try Self.signedAppTransaction(world, id: "704289572311800009", receiptType: receiptType, bundle: bundle),
            transactionID: id, environment: .production)
        let config = try world.config(
            environments: "[Production, Sandbox]",
            pull: "{notifications: false, refund_history: false, app_transaction_info: true}")
        let store = try world.openStore(config)
        try world.credit(store, [id], runID: 0)
        let summary = try ApplePullerTests.pull(world, config, store)
        #expect(summary.appTransactions == 0)
        #expect(try Self.stored(world, store) == ["\(id)=NULL"])
        #expect(summary.errors.count == 1, "\(summary.errors)")
    }
}

@Suite(.enabled(if: TestPostgres.available, "no PostgreSQL server for the tests (see PostgresAvailabilityTests)"))
struct PostgresAppTransactionRecorderTests {
    @Test func anAppTransactionIDIsRecordedOnceAndOnlyOnAVerifiedTransactionWithoutOne() throws {
        let store = try TestPostgres.freshStore("apptx_rec")
        var batch = IngestBatch()
        for (id, status) in [
            ("2300000000000011", VerificationOutcome.Status.verified), ("2300000000000012", .unverified),
        ] {
            var t = AppleTransaction(transactionID: id)
            t.bundleID = NetworkTestWorld.bundleID
            t.productID = NetworkTestWorld.product
            t.purchaseDate = NetworkTestWorld.t0
            batch.sightings.append(
                AppleSighting(
                    transaction: t, sourceKind: .api, sourceName: "apple", sourceRef: id, payloadHash: id,
                    verification: VerificationOutcome(status: status)))
        }
        try RefundReversalTests.write([batch], to: store)
        #expect(try store.recordAppTransactionID("7042", forTransaction: "2300000000000011", runID: 2))
        #expect(try !store.recordAppTransactionID("7043", forTransaction: "2300000000000011", runID: 3))
        #expect(try !store.recordAppTransactionID("7044", forTransaction: "2300000000000012", runID: 3))
        let rows = try store.rows("SELECT transaction_id, app_transaction_id, last_run_id FROM transactions ORDER BY 1")
        #expect(
            rows.map { $0.map { $0.textValue ?? $0.integerValue.map(String.init) ?? "NULL" } } == [
                ["2300000000000011", "7042", "2"], ["2300000000000012", "NULL", "1"],
            ])
    }
}
