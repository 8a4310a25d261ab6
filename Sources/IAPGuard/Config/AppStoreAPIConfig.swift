import Foundation

/// One configured App Store Server API source (`app_store_api:` in the config; see `docs/network.md`).
///
/// The key is not read when the config is parsed: ``ApplePuller`` loads it (and refuses a file readable by
/// group or others) when it pulls.
public struct AppStoreAPIConfig: Sendable, Hashable {
    /// What to pull each run.
    public struct Pull: Sendable, Hashable {
        /// Get Notification History for the window.
        public var notifications: Bool = true
        /// One history query per type (Apple filters by one type per request); empty (the default): all types
        /// in one query — the mis-credit rules need renewals and purchases as well as refunds.
        public var notificationTypes: [String] = []
        /// Only notifications Apple failed to deliver to the backend.
        public var onlyFailures: Bool = false
        /// Get Transaction History for credited transactions the store has not seen verified.
        public var transactionHistory: Bool = true
        /// Get Refund History for credited customers: those with activity since the last poll, plus a rolling
        /// sweep of the rest.
        public var refundHistory: Bool = true
        /// Customers the rolling refund sweep polls per app and run (`refund_sweep`); `nil`: a quarter of
        /// `max_calls_per_run`. See ``refundSweepCalls(maxCallsPerRun:)``.
        public var refundSweep: Int?
        /// Get App Transaction Info for credited, verified transactions stored without an `appTransactionId`
        /// (`app_transaction_info`; off by default: it spends a call on each such transaction).
        public var appTransactionInfo: Bool = false
        /// Calls Get App Transaction Info may take per app and run (`app_transaction_calls`); `nil`: a quarter
        /// of `max_calls_per_run`. See ``appTransactionCalls(maxCallsPerRun:)``.
        public var appTransactionCallLimit: Int?

        /// Get App Transaction Info's calls per app and run.
        public func appTransactionCalls(maxCallsPerRun: Int) -> Int {
            max(1, appTransactionCallLimit ?? maxCallsPerRun / 4)
        }

        /// The sweep's calls per app and run.
        public func refundSweepCalls(maxCallsPerRun: Int) -> Int {
            max(1, refundSweep ?? maxCallsPerRun / 4)
        }

        public init() {}
    }

    /// Apple's production and sandbox base URLs.
    public static let defaultBaseURLs: [AppleEnvironment: URL] = {
        var urls: [AppleEnvironment: URL] = [:]
        urls[.production] = URL(string: "https://api.storekit.apple.com")
        urls[.sandbox] = URL(string: "https://api.storekit-sandbox.apple.com")
        return urls
    }()

    /// Names the source in watermarks, run counts and reports.
    public var name: String
    public var issuerID: String
    public var keyID: String
    public var key: AppStoreKeyFile.Location
    /// The apps pulled (bundle ids of configured apps); default: every configured app.
    public var bundleIDs: [String]
    /// The environments queried; `nil`: each app's configured environments that Apple signs.
    public var environments: [AppleEnvironment]?
    public var baseURLs: [AppleEnvironment: URL]
    /// Logical API calls allowed per run for this source (retries not counted).
    public var maxCallsPerRun: Int
    /// How far back notification history starts on the first run (Apple keeps 180 days, 30 in Sandbox).
    public var lookbackDays: Int
    public var timeoutSeconds: Double
    public var requestsPerSecond: Double
    public var retry: RetryPolicy
    public var pull: Pull

    public init(
        name: String, issuerID: String, keyID: String, key: AppStoreKeyFile.Location, bundleIDs: [String] = [],
        environments: [AppleEnvironment]? = nil, baseURLs: [AppleEnvironment: URL] = AppStoreAPIConfig.defaultBaseURLs,
        maxCallsPerRun: Int = 200, lookbackDays: Int = 30, timeoutSeconds: Double = 30, requestsPerSecond: Double = 5,
        retry: RetryPolicy = RetryPolicy(), pull: Pull = Pull()
    ) {
        self.name = name
        self.issuerID = issuerID
        self.keyID = keyID
        self.key = key
        self.bundleIDs = bundleIDs
        self.environments = environments
        self.baseURLs = baseURLs
        self.maxCallsPerRun = maxCallsPerRun
        self.lookbackDays = lookbackDays
        self.timeoutSeconds = timeoutSeconds
        self.requestsPerSecond = requestsPerSecond
        self.retry = retry
        self.pull = pull
    }
}

/// Online FX rates (`fx:` in the config): the ECB daily reference rates plus a second source for
/// currencies the ECB does not publish. Without it the `fx_rates` snapshot is used alone.
public struct FXFetchConfig: Sendable, Hashable {
    /// The ECB's 90-day history (XML); `eurofxref-hist.zip`'s CSV and the daily XML also parse.
    public static let defaultECBURL = URL(string: "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist-90d.xml")

    /// ECB reference rates (XML `eurofxref` or the ECB CSV); `nil`: not fetched.
    public var ecbURL: URL?
    /// A `date,currency,per_eur` CSV for currencies the ECB lacks (ARS, EGP, PKR, NGN, …).
    public var extraURL: URL?
    public var timeoutSeconds: Double
    public var retry: RetryPolicy

    public init(
        ecbURL: URL? = FXFetchConfig.defaultECBURL, extraURL: URL? = nil, timeoutSeconds: Double = 30,
        retry: RetryPolicy = RetryPolicy(maxAttempts: 3)
    ) {
        self.ecbURL = ecbURL
        self.extraURL = extraURL
        self.timeoutSeconds = timeoutSeconds
        self.retry = retry
    }
}

extension ConfigReader {
    /// Parses `app_store_api:` (one mapping or a list of them); `apps` are the configured apps.
    func appStoreAPI(_ value: Any?, apps: [Config.App]) throws -> [AppStoreAPIConfig] {
        guard let value, !(value is NSNull) else { return [] }
        let items: [(Any, String)]
        if let list = value as? [Any] {
            items = list.enumerated().map { ($1, "app_store_api[\($0)]") }
        } else {
            items = [(value, "app_store_api")]
        }
        var result: [AppStoreAPIConfig] = []
        for (item, at) in items {
            let entry = try appStoreAPIEntry(item, at: at, apps: apps, index: result.count)
            if result.contains(where: { $0.name == entry.name }) {
                throw ConfigError(file: file, key: "\(at).name", message: "the name '\(entry.name)' is used twice")
            }
            result.append(entry)
        }
        return result
    }

    private func appStoreAPIEntry(_ value: Any, at: String, apps: [Config.App], index: Int) throws -> AppStoreAPIConfig
    {
        let map = try mapping(value, at: at)
        try rejectUnknown(
            map,
            allowed: [
                "name", "issuer_id", "key_id", "key_file", "key_credential", "bundle_ids", "environments", "base_url",
                "base_urls", "max_calls_per_run", "lookback_days", "timeout_seconds", "requests_per_second", "retry",
                "pull",
            ], at: at)
        let keyFile = try string(map, "key_file", at: at)
        let keyCredential = try string(map, "key_credential", at: at)
        let key: AppStoreKeyFile.Location
        switch (keyFile, keyCredential) {
        case (let path?, nil): key = .path(resolve(path))
        case (nil, let name?): key = .credential(name)
        default:
            throw ConfigError(
                file: file, key: "\(at).key_file", message: "give exactly one of key_file or key_credential")
        }
        let known = Set(apps.map(\.bundleID))
        let bundles = try stringList(map, "bundle_ids", at: at)
        for (i, bundle) in bundles.enumerated() where !known.contains(bundle) {
            throw ConfigError(file: file, key: "\(at).bundle_ids[\(i)]", message: "'\(bundle)' is not a configured app")
        }
        var environments: [AppleEnvironment]?
        if map["environments"] != nil {
            environments = try stringList(map, "environments", at: at).enumerated().map { i, text in
                guard let env = AppleEnvironment(appleValue: text), env.isSignedByApple else {
                    throw ConfigError(
                        file: file, key: "\(at).environments[\(i)]", message: "expected Production or Sandbox")
                }
                return env
            }
        }
        var baseURLs = AppStoreAPIConfig.defaultBaseURLs
        if let text = try string(map, "base_url", at: at) {
            let url = try apiBaseURL(text, at: "\(at).base_url")
            baseURLs = [.production: url, .sandbox: url]
        }
        if let raw = map["base_urls"] {
            let urls = try mapping(raw, at: "\(at).base_urls")
            try rejectUnknown(urls, allowed: ["Production", "Sandbox"], at: "\(at).base_urls")
            for (name, env) in [("Production", AppleEnvironment.production), ("Sandbox", .sandbox)] {
                if let text = try string(urls, name, at: "\(at).base_urls") {
                    baseURLs[env] = try apiBaseURL(text, at: "\(at).base_urls.\(name)")
                }
            }
        }
        let lookback = try integer(map, "lookback_days", at: at) ?? 30
        guard (1...180).contains(lookback) else {
            throw ConfigError(
                file: file, key: "\(at).lookback_days", message: "expected 1 to 180 (Apple keeps 180 days of history)")
        }
        let maxCalls = try integer(map, "max_calls_per_run", at: at) ?? 200
        guard maxCalls >= 1 else {
            throw ConfigError(file: file, key: "\(at).max_calls_per_run", message: "expected at least 1")
        }
        var pull = AppStoreAPIConfig.Pull()
        if let raw = map["pull"] {
            let p = try mapping(raw, at: "\(at).pull")
            let where_ = "\(at).pull"
            try rejectUnknown(
                p,
                allowed: [
                    "notifications", "notification_types", "only_failures", "transaction_history", "refund_history",
                    "refund_sweep", "app_transaction_info", "app_transaction_calls",
                ],
                at: where_)
            pull.notifications = try bool(p, "notifications", at: where_) ?? pull.notifications
            if p["notification_types"] != nil {
                pull.notificationTypes = try stringList(p, "notification_types", at: where_)
            }
            pull.onlyFailures = try bool(p, "only_failures", at: where_) ?? pull.onlyFailures
            pull.transactionHistory = try bool(p, "transaction_history", at: where_) ?? pull.transactionHistory
            pull.refundHistory = try bool(p, "refund_history", at: where_) ?? pull.refundHistory
            if let sweep = try integer(p, "refund_sweep", at: where_) {
                guard sweep >= 1 else {
                    throw ConfigError(file: file, key: "\(where_).refund_sweep", message: "expected at least 1")
                }
                pull.refundSweep = Int(sweep)
            }
            pull.appTransactionInfo = try bool(p, "app_transaction_info", at: where_) ?? pull.appTransactionInfo
            if let calls = try integer(p, "app_transaction_calls", at: where_) {
                guard calls >= 1 else {
                    throw ConfigError(
                        file: file, key: "\(where_).app_transaction_calls", message: "expected at least 1")
                }
                pull.appTransactionCallLimit = Int(calls)
            }
        }
        return AppStoreAPIConfig(
            name: try string(map, "name", at: at) ?? (index == 0 ? "app_store_api" : "app_store_api_\(index + 1)"),
            issuerID: try requiredString(map, "issuer_id", at: at), keyID: try requiredString(map, "key_id", at: at),
            key: key, bundleIDs: bundles, environments: environments, baseURLs: baseURLs,
            maxCallsPerRun: Int(maxCalls), lookbackDays: Int(lookback),
            timeoutSeconds: try positiveNumber(map, "timeout_seconds", at: at) ?? 30,
            requestsPerSecond: try positiveNumber(map, "requests_per_second", at: at) ?? 5,
            retry: try retryPolicy(map["retry"], at: "\(at).retry", defaults: RetryPolicy()), pull: pull)
    }

    /// Parses `fx:`.
    func fxFetch(_ value: Any?) throws -> FXFetchConfig? {
        guard let value, !(value is NSNull) else { return nil }
        let map = try mapping(value, at: "fx")
        try rejectUnknown(map, allowed: ["ecb_url", "extra_url", "timeout_seconds", "retry"], at: "fx")
        var fx = FXFetchConfig()
        if map.keys.contains("ecb_url") {
            fx.ecbURL = try string(map, "ecb_url", at: "fx").map { try httpURL($0, at: "fx.ecb_url") }
        }
        fx.extraURL = try string(map, "extra_url", at: "fx").map { try httpURL($0, at: "fx.extra_url") }
        fx.timeoutSeconds = try positiveNumber(map, "timeout_seconds", at: "fx") ?? fx.timeoutSeconds
        fx.retry = try retryPolicy(map["retry"], at: "fx.retry", defaults: fx.retry)
        return fx
    }

    private func retryPolicy(_ value: Any?, at: String, defaults: RetryPolicy) throws -> RetryPolicy {
        guard let value, !(value is NSNull) else { return defaults }
        let map = try mapping(value, at: at)
        try rejectUnknown(map, allowed: ["max_attempts", "base_delay_ms", "max_delay_ms", "max_retry_after_s"], at: at)
        var policy = defaults
        if let attempts = try integer(map, "max_attempts", at: at) {
            guard (1...20).contains(attempts) else {
                throw ConfigError(file: file, key: "\(at).max_attempts", message: "expected 1 to 20")
            }
            policy.maxAttempts = Int(attempts)
        }
        // Bounded to a day: a larger wait is a typo, and seconds become whole numbers in messages.
        if let ms = try bounded(map, "base_delay_ms", at: at, max: 86_400_000) { policy.baseDelay = Double(ms) / 1000 }
        if let ms = try bounded(map, "max_delay_ms", at: at, max: 86_400_000) { policy.maxDelay = Double(ms) / 1000 }
        if let s = try bounded(map, "max_retry_after_s", at: at, max: 86_400) { policy.maxRetryAfter = Double(s) }
        return policy
    }

    /// A whole number from 0 to `max` (a negative value reads as 0, as before the bound).
    private func bounded(_ map: [String: Any], _ key: String, at: String, max limit: Int64) throws -> Int64? {
        guard let value = try integer(map, key, at: at) else { return nil }
        guard value <= limit else {
            throw ConfigError(
                file: file, key: "\(at).\(key)", message: "expected a whole number from 0 to \(limit), found \(value)")
        }
        return max(0, value)
    }

    private func positiveNumber(_ map: [String: Any], _ key: String, at: String) throws -> Double? {
        guard let value = map[key], !(value is NSNull) else { return nil }
        let number: Double?
        if value is Bool {
            number = nil
        } else if let i = value as? Int {
            number = Double(i)
        } else if let d = value as? Double {
            number = d
        } else {
            number = nil
        }
        guard let number, number > 0, number.isFinite else {
            throw ConfigError(file: file, key: "\(at).\(key)", message: "expected a positive number")
        }
        return number
    }

    /// An App Store Server API base URL: `https`, or plain `http` to a loopback host only (a test double), since
    /// every request carries the API's bearer token; no query or fragment, since request paths are appended.
    private func apiBaseURL(_ text: String, at: String) throws -> URL {
        let url = try httpURL(text, at: at)
        let host = (url.host ?? "").lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        let loopback = host == "localhost" || host == "::1" || host.hasPrefix("127.")
        if url.scheme?.lowercased() == "http", !loopback {
            throw ConfigError(
                file: file, key: at,
                message:
                    "expected an https URL: plain http only to a loopback host (the API token would cross the network in clear)"
            )
        }
        if url.query != nil || url.fragment != nil {
            throw ConfigError(
                file: file, key: at,
                message: "expected a base URL without a query or fragment (request paths are appended to it)")
        }
        return url
    }

    private func httpURL(_ text: String, at: String) throws -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
            url.host != nil
        else {
            throw ConfigError(file: file, key: at, message: "expected an http(s) URL")
        }
        return url
    }
}
