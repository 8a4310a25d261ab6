import Crypto
import Foundation
import Logging

/// The network stage: pulls Apple's own records from the App Store Server API into the store.
///
/// Per configured `app_store_api` source and app, each run pulls (as configured):
/// 1. **notification history** for the window since the last run (one query per notification type, with
///    `onlyFailures` if set), continued with `paginationToken`;
/// 2. **transaction history** for transactions the backend credited that the store has not seen verified
///    (Production first; Sandbox only when the app allows Sandbox — a 4040010 never makes it guess);
/// 3. **refund history** for customers with credited, verified transactions (least recently checked first).
///
/// Everything returned is signed: it goes through the same parsers and verifier as file sources
/// (``NotificationParser``, ``SignedTransactionParser``, the configured ``AppleRecordVerifier``) and is
/// written with ``PurchaseStore/write(_:runID:)``; a payload that does not parse is quarantined. Each
/// page is committed before its ``PullWatermark`` moves. At most `max_calls_per_run` calls are made per
/// source; what was left is listed in ``ApplePullSummary/left``.
public struct ApplePuller {
    public let config: Config
    public let verifier: any AppleRecordVerifier
    public let logger: Logger
    public var httpClient: any HTTPClient
    /// The process environment (`CREDENTIALS_DIRECTORY` for `key_credential`).
    public var processEnvironment: [String: String]
    /// Sleeps between retries (tests make it record instead).
    public var sleep: @Sendable (TimeInterval) -> Void
    /// Now, epoch ms.
    public var now: @Sendable () -> Int64
    /// How much of the previous notification window is read again (deduplicated by notification UUID).
    public var notificationOverlap: Int64 = 3_600_000
    /// How long a transaction id Apple did not find is left alone before it is asked about again.
    public var notFoundRecheck: Int64 = 7 * 86_400_000

    public init(
        config: Config, verifier: any AppleRecordVerifier, logger: Logger,
        httpClient: any HTTPClient = URLSessionHTTPClient(),
        processEnvironment: [String: String] = ProcessInfo.processInfo.environment,
        sleep: @escaping @Sendable (TimeInterval) -> Void = { if $0 > 0 { Thread.sleep(forTimeInterval: $0) } },
        now: @escaping @Sendable () -> Int64 = { Clock.nowMillis() }
    ) {
        self.config = config
        self.verifier = verifier
        self.logger = logger
        self.httpClient = httpClient
        self.processEnvironment = processEnvironment
        self.sleep = sleep
        self.now = now
    }

    /// Pulls every configured source. API failures are recorded in the summaries (the run goes on); store
    /// errors throw.
    public func pull(store: any PurchaseStore, runID: Int64, shouldStop: @escaping () -> Bool = { false }) throws
        -> [ApplePullSummary]
    {
        var summaries: [ApplePullSummary] = []
        for source in config.appStoreAPI {
            let summary = try pull(source: source, store: store, runID: runID, shouldStop: shouldStop)
            logger.info("app store api pulled", metadata: ["source": "\(source.name)", "summary": "\(summary.text)"])
            summaries.append(summary)
        }
        return summaries
    }

    /// Pulls one source.
    public func pull(
        source: AppStoreAPIConfig, store: any PurchaseStore, runID: Int64, shouldStop: @escaping () -> Bool = { false }
    ) throws -> ApplePullSummary {
        var summary = ApplePullSummary(source: source.name)
        let key: P256.Signing.PrivateKey
        do {
            key = try AppStoreKeyFile.load(source.key, environment: processEnvironment)
        } catch {
            summary.errors.append("\(error)")
            summary.left.append("everything (no usable API key)")
            return summary
        }
        let counting = CountingHTTPClient(httpClient)
        let http = ResilientHTTPClient(
            client: counting, policy: source.retry, timeout: source.timeoutSeconds,
            requestsPerSecond: source.requestsPerSecond, logger: logger, sleep: sleep)
        let session = ApplePullSession(
            source: source, store: store, runID: runID, verifier: verifier, logger: logger, now: now,
            shouldStop: shouldStop, notificationOverlap: notificationOverlap, notFoundRecheck: notFoundRecheck)
        let bundles = source.bundleIDs.isEmpty ? config.apps.map(\.bundleID) : source.bundleIDs
        for bundle in bundles {
            guard let app = config.apps.first(where: { $0.bundleID == bundle }) else { continue }
            let allowed = app.environments.filter(\.isSignedByApple)
            let environments = [AppleEnvironment.production, .sandbox].filter {
                allowed.contains($0) && (source.environments ?? allowed).contains($0)
            }
            var clients: [AppleEnvironment: AppStoreServerAPIClient] = [:]
            for environment in environments {
                guard let base = source.baseURLs[environment] else { continue }
                let signer = AppStoreJWTSigner(
                    issuerID: source.issuerID, keyID: source.keyID, bundleID: bundle, privateKey: key)
                clients[environment] = AppStoreServerAPIClient(
                    environment: environment, baseURL: base, signer: signer, http: http)
            }
            let ordered = environments.compactMap { clients[$0] }
            // The phase that goes first rotates with the run id, so a small call budget cannot starve one kind.
            let phases = [Phase.notifications, .transactionHistory, .refundHistory]
            let first = Int(runID.magnitude % UInt64(phases.count))
            for phase in phases[first...] + phases[..<first] {
                switch phase {
                case .notifications where source.pull.notifications:
                    let types: [String?] = source.pull.notificationTypes.isEmpty ? [nil] : source.pull.notificationTypes
                    try session.pullNotifications(bundle: bundle, clients: ordered, types: types)
                case .transactionHistory where source.pull.transactionHistory:
                    try session.pullTransactionHistory(bundle: bundle, clients: ordered)
                case .refundHistory where source.pull.refundHistory:
                    try session.pullRefundHistory(bundle: bundle, clients: clients)
                default:
                    break
                }
            }
        }
        summary = session.summary
        summary.attempts = counting.count
        return summary
    }

    private enum Phase {
        case notifications, transactionHistory, refundHistory
    }
}
