import Crypto
import Foundation
import Logging

@testable import IAPGuard
@testable import IAPGuardTesting

/// Everything a network test needs: a test signing chain and verifier, an API key on disk (mode 0600), a
/// fake App Store Server API on loopback, a store, and signed payloads in Apple's shapes.
final class NetworkTestWorld {
    static let bundleID = "com.example.coins"
    static let product = "com.example.coins.pack6"
    /// 2026-01-01T00:00:00Z, the first purchase.
    static let t0: Int64 = 1_767_225_600_000

    let directory: URL
    let chain: TestSigningChain
    let apiKey: P256.Signing.PrivateKey
    let keyFile: URL
    let fake: FakeAppStoreAPI
    let logs = LogCapture()
    let otherApps: [String]

    /// `otherApps`: more configured apps the fake serves (their own data, the same API key); `keepAlive`:
    /// the fake keeps connections open between requests, as Apple's servers do.
    init(pageSize: Int = 2, otherApps: [String] = [], keepAlive: Bool = false) throws {
        self.otherApps = otherApps
        directory = TestScratch.root.appendingPathComponent("iapguard-net-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: directory.appendingPathComponent("data"), withIntermediateDirectories: true)
        chain = try TestSigningChain.generate()
        try chain.rootDER.write(to: directory.appendingPathComponent("root.der"))
        apiKey = P256.Signing.PrivateKey()
        keyFile = directory.appendingPathComponent("AuthKey_TESTKEY123.p8")
        try Data(apiKey.pemRepresentation.utf8).write(to: keyFile)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: keyFile.path)
        fake = try FakeAppStoreAPI(
            issuerID: "57246542-96fe-1a63-e053-0824d011072a", keyID: "TESTKEY123", bundleID: Self.bundleID,
            otherBundleIDs: otherApps, publicKey: apiKey.publicKey, pageSize: pageSize, keepAlive: keepAlive)
    }

    deinit {
        fake.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    var logger: Logger {
        let capture = logs
        var logger = Logger(label: "iapguard.test") { _ in CapturingLogHandler(capture: capture) }
        logger.logLevel = .trace
        return logger
    }

    /// The config: one app (environments given), the test root trusted, the fake as base URLs.
    func config(
        environments: String = "[Production, Sandbox]", maxCalls: Int? = 500, pull: String = "", extra: String = "",
        sources: [String] = [], lookbackDays: Int? = 60
    ) throws -> Config {
        let yaml = """
            store: state/store.sqlite
            rules: \(Fixtures.repoRoot.appendingPathComponent("rules").path)
            reports: reports
            trust: [root.der]
            trust_apple_root: false
            apps:
              - bundle_id: \(Self.bundleID)
                environments: \(environments)
                products:
                  - {product_id: \(Self.product), type: Consumable, units: 600, price: "4.99", currency: USD}
            \(otherApps.map { "  - {bundle_id: \($0), environments: \(environments), products: [{product_id: \($0).pack6, type: Consumable, units: 600}]}" }.joined(separator: "\n"))
            app_store_api:
              name: apple
              issuer_id: \(fake.issuerID)
              key_id: \(fake.keyID)
              key_file: \(keyFile.lastPathComponent)
              base_urls: {Production: "\(fake.baseURL(.production).absoluteString)", Sandbox: "\(fake.baseURL(.sandbox).absoluteString)"}
            \(maxCalls.map { "  max_calls_per_run: \($0)" } ?? "")
            \(lookbackDays.map { "  lookback_days: \($0)" } ?? "")
              timeout_seconds: 0.5
              requests_per_second: 1000
              retry: {max_attempts: 6, base_delay_ms: 1, max_delay_ms: 5, max_retry_after_s: 2}
            \(pull.isEmpty ? "" : "  pull: \(pull)")
            \(extra)
            sources:
            \(sources.isEmpty ? "  []" : sources.map { "  - \($0)" }.joined(separator: "\n"))
            """
        let url = directory.appendingPathComponent("iapguard.yml")
        try Data(yaml.utf8).write(to: url)
        return try Config.load(from: url)
    }

    func verifier(_ config: Config) throws -> JWSVerifier { try JWSVerifier.make(for: config) }

    func openStore(_ config: Config) throws -> SQLiteStore {
        let store = try SQLiteStore(path: config.storePath.path)
        try store.migrate()
        return store
    }

    /// A puller for `config` whose retry sleeps are recorded, not slept.
    func puller(_ config: Config, sleeps: SleepRecorder = SleepRecorder()) throws -> ApplePuller {
        ApplePuller(
            config: config, verifier: try verifier(config), logger: logger, sleep: { sleeps.record($0) })
    }

    // MARK: - Signed payloads

    func signedTransaction(
        _ id: String, environment: AppleEnvironment = .production, purchaseDate: Int64 = NetworkTestWorld.t0,
        revocationDate: Int64? = nil, originalID: String? = nil, signedDate: Int64? = nil, bundle: String? = nil
    ) throws -> String {
        var payload: [String: Any] = [
            "transactionId": id, "originalTransactionId": originalID ?? id, "bundleId": bundle ?? Self.bundleID,
            "productId": bundle.map { "\($0).pack6" } ?? Self.product, "type": "Consumable", "quantity": 1,
            "purchaseDate": purchaseDate,
            "originalPurchaseDate": purchaseDate, "environment": environment.rawValue, "storefront": "USA",
            "currency": "USD", "price": 4990, "inAppOwnershipType": "PURCHASED", "transactionReason": "PURCHASE",
            "signedDate": signedDate ?? (max(purchaseDate, revocationDate ?? purchaseDate) + 1000),
        ]
        if let revocationDate {
            payload["revocationDate"] = revocationDate
            payload["revocationReason"] = 0
        }
        return try chain.sign(payload: JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys]))
    }

    func signedNotification(
        uuid: String, type: String, signedDate: Int64, transaction: String, environment: AppleEnvironment = .production
    ) throws -> String {
        let payload: [String: Any] = [
            "notificationType": type, "notificationUUID": uuid, "version": "2.0", "signedDate": signedDate,
            "data": [
                "bundleId": Self.bundleID, "environment": environment.rawValue, "signedTransactionInfo": transaction,
            ],
        ]
        return try chain.sign(payload: JSONSerialization.data(withJSONObject: payload, options: [.sortedKeys]))
    }

    /// Credits for the given transactions (one per user `u-<id suffix>`), written to the store.
    func credit(_ store: SQLiteStore, _ transactionIDs: [String], runID: Int64) throws {
        var batch = IngestBatch()
        for (index, id) in transactionIDs.enumerated() {
            var credit = Credit(creditID: "c-\(id)")
            credit.transactionID = id
            credit.userID = "u-\(index % 3)"
            credit.productID = Self.product
            credit.units = 600
            credit.creditedAt = Self.t0 + 60_000
            batch.credits.append((credit, "credits", "test:\(index)"))
        }
        _ = try store.write(batch, runID: runID)
    }

    /// Rows of `sql` as text.
    func rows(_ store: SQLiteStore, _ sql: String) throws -> [[String?]] {
        try store.database.query(sql).map { $0.map(\.textValue) }
    }

    /// Everything pulled (sightings, canonical transactions, notifications, quarantine), for comparisons.
    func fingerprint(_ store: SQLiteStore) throws -> [String] {
        var out: [String] = []
        for sql in [
            "SELECT sighting_id, transaction_id, verification FROM apple_sighting ORDER BY 1",
            "SELECT transaction_id, verification, revocation_date, sighting_count FROM apple_transaction ORDER BY 1",
            "SELECT notification_uuid, notification_type, transaction_id, verification FROM notification ORDER BY 1",
            "SELECT location, reason, raw_hash FROM quarantine ORDER BY 1, 3",
        ] {
            out.append(try rows(store, sql).map { $0.map { $0 ?? "∅" }.joined(separator: "|") }.joined(separator: "\n"))
        }
        return out
    }
}

/// Records retry sleeps instead of sleeping.
final class SleepRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var delays: [TimeInterval] = []
    func record(_ delay: TimeInterval) {
        lock.lock()
        defer { lock.unlock() }
        delays.append(delay)
    }
    var recorded: [TimeInterval] {
        lock.lock()
        defer { lock.unlock() }
        return delays
    }
}

/// Collects every log line (message and metadata) of a logger.
final class LogCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var lines: [String] = []
    func append(_ line: String) {
        lock.lock()
        defer { lock.unlock() }
        lines.append(line)
    }
    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return lines.joined(separator: "\n")
    }
}

/// A swift-log handler writing into a ``LogCapture``.
struct CapturingLogHandler: LogHandler {
    let capture: LogCapture
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = self.metadata.merging(event.metadata ?? [:]) { _, new in new }
        capture.append(
            "\(event.level) \(event.message) \(all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))"
        )
    }
}
