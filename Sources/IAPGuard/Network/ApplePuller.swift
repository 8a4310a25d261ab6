import Crypto
import Foundation
import Logging

/// The network stage: pulls Apple's own records from the App Store Server API into the store.
///
/// Per configured `app_store_api` source and app, each run pulls (as configured):
/// 1. **notification history** for the run's window (all types by default, or one query per configured
///    type, with `onlyFailures` if set), continued with `paginationToken`;
/// 2. **transaction history** for transactions a credit, an order or a notification names that the store
///    has not seen verified (Production first; Sandbox only when the app allows Sandbox — a 4040010 never
///    makes it guess an environment; the other apps' credentials are tried before "not found");
/// 3. **refund history** for credited customers with activity since the last poll, plus a rolling sweep
///    (each Apple customer once);
/// 4. where enabled (`app_transaction_info`), **app transaction info** for credited, verified transactions
///    stored without an `appTransactionId`: the signed app transaction is verified and its id stored
///    against the transaction.
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
    /// errors throw. `window` is the run's: `since` when the run was given one (`--since`), `until` its end
    /// (the notification history window follows it; see ``ApplePullSession/notificationWindow(mark:environment:)``).
    public func pull(
        store: any PurchaseStore, runID: Int64, window: PullWindow = PullWindow(),
        shouldStop: @escaping () -> Bool = { false }
    ) throws -> [ApplePullSummary] {
        var summaries: [ApplePullSummary] = []
        for source in config.appStoreAPI {
            let summary = try pull(source: source, store: store, runID: runID, window: window, shouldStop: shouldStop)
            logger.info("app store api pulled", metadata: ["source": "\(source.name)", "summary": "\(summary.text)"])
            summaries.append(summary)
        }
        return summaries
    }

    /// Pulls one source.
    public func pull(
        source: AppStoreAPIConfig, store: any PurchaseStore, runID: Int64, window: PullWindow = PullWindow(),
        shouldStop: @escaping () -> Bool = { false }
    ) throws -> ApplePullSummary {
        var summary = ApplePullSummary(source: source.name)
        let key: P256.Signing.PrivateKey
        do {
            key = try AppStoreKeyFile.load(source.key, environment: processEnvironment)
        } catch {
            summary.errors.append("\(error)")
            summary.left.append("everything (no usable API key)")
            if source.pull.transactionHistory {
                try store.setUncheckedTransactions(
                    try Self.askable(store), reason: "no usable App Store Server API key", sourceName: source.name,
                    runID: runID)
            }
            return summary
        }
        let counting = CountingHTTPClient(httpClient)
        let http = ResilientHTTPClient(
            client: counting, policy: source.retry, timeout: source.timeoutSeconds,
            requestsPerSecond: source.requestsPerSecond, logger: logger, sleep: sleep)
        let session = ApplePullSession(
            source: source, store: store, runID: runID, verifier: verifier, logger: logger, now: now,
            shouldStop: shouldStop, notificationOverlap: notificationOverlap, notFoundRecheck: notFoundRecheck,
            window: window)
        let bundles = (source.bundleIDs.isEmpty ? config.apps.map(\.bundleID) : source.bundleIDs).filter { bundle in
            config.apps.contains { $0.bundleID == bundle }
        }
        var clientsByBundle: [String: [AppleEnvironment: AppStoreServerAPIClient]] = [:]
        var orderedByBundle: [String: [AppStoreServerAPIClient]] = [:]
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
            clientsByBundle[bundle] = clients
            orderedByBundle[bundle] = environments.compactMap { clients[$0] }
        }
        // The transactions to ask about, read once per run (a full read of the credits, orders and
        // notifications). Every one is unchecked until Apple answers: a pull that stops early leaves the rest
        // named, with why, for IAP-020.
        var candidates: [(id: String, bundle: String?)]?
        func readCandidates(unchecked reason: String) throws -> [(id: String, bundle: String?)] {
            if let candidates { return candidates }
            let all = try session.transactionCandidates()
            try store.setUncheckedTransactions(
                all.map(\.id).filter(ApplePullSession.isAppleTransactionID), reason: reason, sourceName: source.name,
                runID: runID)
            candidates = all
            return all
        }
        for (index, bundle) in bundles.enumerated() {
            let clients = clientsByBundle[bundle] ?? [:]
            let ordered = orderedByBundle[bundle] ?? []
            // The phase that goes first rotates with the run id, so a small call budget cannot starve one kind.
            let phases = [Phase.notifications, .transactionHistory, .refundHistory]
            let first = Int(runID.magnitude % UInt64(phases.count))
            for phase in phases[first...] + phases[..<first] {
                switch phase {
                case .notifications where source.pull.notifications:
                    let types: [String?] = source.pull.notificationTypes.isEmpty ? [nil] : source.pull.notificationTypes
                    try session.pullNotifications(bundle: bundle, clients: ordered, types: types)
                case .transactionHistory where source.pull.transactionHistory && !ordered.isEmpty:
                    // Each candidate is checked again before Apple is asked about it.
                    let all = try readCandidates(unchecked: "not asked yet")
                    let others = bundles.filter { $0 != bundle }.map { ($0, orderedByBundle[$0] ?? []) }
                    try session.pullTransactionHistory(
                        bundle: bundle, clients: ordered, others: others, candidates: all, isFirstApp: index == 0)
                case .refundHistory where source.pull.refundHistory:
                    try session.pullRefundHistory(bundle: bundle, clients: clients)
                default:
                    break
                }
            }
            // After the three kinds above, so it spends only what they left of the budget.
            if source.pull.appTransactionInfo {
                try session.pullAppTransactionInfo(bundle: bundle, clients: clients)
            }
        }
        if source.pull.transactionHistory, candidates == nil {
            _ = try readCandidates(unchecked: "not asked this run (no environment of the app is pulled)")
        }
        summary = session.summary
        summary.attempts = counting.count
        return summary
    }

    /// The candidate transactions Apple can be asked about (decimal ids).
    static func askable(_ store: any PurchaseStore) throws -> [String] {
        try ApplePullSession.transactionCandidates(in: store).map(\.id).filter(ApplePullSession.isAppleTransactionID)
    }

    private enum Phase {
        case notifications, transactionHistory, refundHistory
    }

    /// The run's window as the pull sees it (epoch ms).
    public struct PullWindow: Sendable, Hashable {
        /// The start the run was given (`--since`); nil: each query continues from its own watermark.
        public var since: Int64?
        /// The run's end (`--until`, or now); nil: now.
        public var until: Int64?

        public init(since: Int64? = nil, until: Int64? = nil) {
            self.since = since
            self.until = until
        }
    }
}
