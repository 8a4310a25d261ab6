import Foundation
import Yams

/// The job's configuration, loaded from YAML. Relative paths resolve against the config file's folder.
/// Unknown keys and wrong types are errors that name the key. See `docs/configuration.md`.
public struct Config: Sendable {
    /// One configured app.
    public struct App: Sendable, Hashable {
        public var bundleID: String
        public var appAppleID: Int64?
        public var environments: [AppleEnvironment]
        public var products: [Product]
    }

    /// One catalog product of an app.
    public struct Product: Sendable, Hashable {
        public var productID: String
        /// Apple's spelling: `Consumable`, `Non-Consumable`, `Auto-Renewable Subscription`, `Non-Renewing Subscription`.
        public var type: String
        public var units: Int64
        /// Reference price, milliunits of `currency`.
        public var price: Int64?
        public var currency: String?
    }

    /// One input source.
    public struct Source: Sendable, Hashable {
        public enum Kind: String, Sendable, CaseIterable {
            case receipts
            case signedTransactions = "signed-transactions"
            case notifications
            case orders
            case credits
            /// The backend's accounts (home country, account markers).
            case users
        }
        public enum Format: String, Sendable, CaseIterable {
            case jsonl, csv, sqlite, postgres
        }
        public var name: String
        public var kind: Kind
        public var format: Format
        public var path: URL
        public var query: String?
        /// The backend database of a `format: postgres` source (its `url`, `password_file`, `tls`).
        public var postgres: PostgresSettings? = nil
        /// The share of a run's records that may be quarantined before the source is in error (`max_bad_share`).
        public var maxBadShare: Double = 0.5
        /// Fewer good records than this in a run that read the source is a source error (`min_records`).
        public var minRecords: Int? = nil
        /// Fields the backend leaves out on purpose (`absent_columns`): not a degraded source.
        public var absentColumns: [String] = []
    }

    public var file: URL
    public var storePath: URL
    /// The PostgreSQL store when `store` is a `postgres://` URL (then ``storePath`` is unused).
    public var postgresStore: PostgresSettings? = nil
    public var rulesDirectory: URL?
    public var reportsDirectory: URL
    public var referenceCurrency: String
    public var fxRatesFile: URL?
    public var trustedRootFiles: [URL]
    public var trustAppleRoot: Bool
    public var apps: [App]
    public var testers: [String]
    public var ruleParams: [String: [String: SQLValue]]
    public var sources: [Source]
    /// App Store Server API sources pulled each run (`app_store_api:`; see `docs/network.md`).
    public var appStoreAPI: [AppStoreAPIConfig] = []
    /// Online FX rates (`fx:`); `nil`: the `fx_rates` snapshot only.
    public var fxFetch: FXFetchConfig?
    /// How far before the stored watermark (the end of the last successful run's window) the default
    /// window of a run starts, in hours (`lookback_hours`, default 72: refunds arrive days later).
    public var lookbackHours: Int64 = 72
    /// How long (days) an evaluated window stays re-evaluable (`rewind_horizon_days`, default 30): the undo
    /// images that let a later run replace its findings are deleted after that.
    public var rewindHorizonDays: Int64 = 30
    /// SHA-256 of the config file's bytes, recorded with every run.
    public var hash: String
    /// What ingest reads from the config, hashed (``ingestFingerprint(sources:trust:trustAppleRoot:apps:)``):
    /// an input file is skipped as unchanged only when it was read under the same. Empty when the config was
    /// not built from YAML: ``hash`` stands in.
    public var ingestHash: String = ""

    /// The hash input files are recorded under: ``ingestHash``, else ``hash``.
    public var fileStateHash: String { ingestHash.isEmpty ? hash : ingestHash }

    static let topLevelKeys: Set<String> = [
        "store", "rules", "reports", "reference_currency", "fx_rates", "trust", "trust_apple_root", "apps", "testers",
        "rule_params", "sources", "app_store_api", "fx", "lookback_hours", "store_password_file", "store_tls",
        "rewind_horizon_days",
    ]

    /// The largest `lookback_hours` (ten years).
    static let maxLookbackHours: Int64 = 87_600
    /// The largest `rewind_horizon_days` (ten years).
    static let maxRewindHorizonDays: Int64 = 3_650

    /// The most YAML values (scalars, lists, mappings, aliases expanded) a config file may hold.
    static let maxYAMLNodes = 100_000

    /// Loads and validates the config at `url`.
    public static func load(from url: URL) throws -> Config {
        let path = url.path
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
            throw ConfigError(file: path, key: nil, message: "is a folder, not a config file")
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ConfigError(file: path, key: nil, message: "cannot read the file (\(error.localizedDescription))")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw ConfigError(file: path, key: nil, message: "not UTF-8 text")
        }
        return try parse(text, file: url, hash: Hashing.sha256Hex(data))
    }

    /// Parses config text; `file` is used for error messages and to resolve relative paths.
    public static func parse(_ text: String, file: URL, hash: String? = nil) throws -> Config {
        let path = file.path
        let root: Any?
        let node: Node?
        do {
            node = try Yams.compose(yaml: text)
            // Checked before Yams builds values: aliases are expanded then (a few lines of nested aliases,
            // "billion laughs", would be billions of values; a real config has a few hundred), and a list
            // or mapping used as a key makes Yams trap.
            switch node?.constructionProblem(limit: Self.maxYAMLNodes) {
            case .tooLarge:
                throw ConfigError(
                    file: path, key: nil,
                    message: "more than \(Self.maxYAMLNodes) YAML values once aliases are expanded")
            case .complexKey(let line):
                throw ConfigError(
                    file: path, key: nil, message: "line \(line): a key must be text, not a list or a mapping")
            case nil:
                root = node?.any
            }
        } catch let error as YamlError {
            throw Self.configError(error, text: text, file: path)
        }
        guard let top = root as? [String: Any] else {
            throw ConfigError(file: path, key: nil, message: "the top level must be a mapping of keys")
        }
        do {
            return try build(top, text: text, file: file, hash: hash)
        } catch var error as ConfigError where error.line == nil && error.file == path {
            // The reader works on plain values; the composed tree still knows where each key is.
            if let key = error.key { error.line = node?.line(ofKeyPath: key) }
            throw error
        }
    }

    /// A YAML error as a config error naming the line and the problem. Yams' own description quotes the whole
    /// file, which may hold a password (a PostgreSQL URL): never printed.
    static func configError(_ error: YamlError, text: String, file: String) -> ConfigError {
        switch error {
        case .scanner(let context, let problem, let mark, _), .parser(let context, let problem, let mark, _),
            .composer(let context, let problem, let mark, _):
            let prefix = context.map { "\($0.text) " } ?? ""
            return ConfigError(file: file, key: nil, message: "YAML syntax error: \(prefix)\(problem)", line: mark.line)
        case .duplicatedKeysInMapping(let duplicates, let context):
            // The mark is the mapping's start; each key's own lines tell where it was written twice.
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            let described = duplicates.map { key -> String in
                let at = lines.indices.filter { index in
                    let line = lines[index].drop(while: { $0 == " " })
                    return line.hasPrefix(key + ":") || line.hasPrefix("\"" + key + "\":")
                }.map { String($0 + 1) }
                return at.count >= 2 ? "\(key) (lines \(at.joined(separator: ", ")))" : key
            }
            return ConfigError(
                file: file, key: nil, message: "YAML syntax error: duplicate key \(described.joined(separator: "; "))",
                line: context.mark.line)
        case .reader(let problem, _, _, _):
            return ConfigError(file: file, key: nil, message: "unreadable YAML: \(problem)")
        default:
            return ConfigError(file: file, key: nil, message: "unreadable YAML")
        }
    }

    /// Builds the config from the parsed top-level mapping (errors name the key; ``parse(_:file:hash:)``
    /// adds the line).
    static func build(_ top: [String: Any], text: String, file: URL, hash: String?) throws -> Config {
        let path = file.path
        let reader = ConfigReader(file: path, base: file.deletingLastPathComponent())
        try reader.rejectUnknown(top, allowed: topLevelKeys, at: nil)

        let storeText = try reader.string(top, "store", at: nil) ?? "state/iapguard.sqlite"
        let postgresStore = try reader.postgres(
            url: PostgresSettings.isURL(storeText) ? storeText : nil, passwordFile: top["store_password_file"],
            tls: top["store_tls"], at: "store")
        let rules = try reader.string(top, "rules", at: nil).map(reader.resolve)
        // A typo here must not give a green run with no findings.
        if let rules {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: rules.path, isDirectory: &isFolder), isFolder.boolValue else {
                throw ConfigError(file: path, key: "rules", message: "\(rules.path) is not a folder")
            }
        }
        let reports = reader.resolve(try reader.string(top, "reports", at: nil) ?? "reports")
        let currency = try reader.string(top, "reference_currency", at: nil) ?? "USD"
        guard currency.count == 3, currency.allSatisfy({ $0.isUppercase && $0.isASCII }) else {
            throw ConfigError(file: path, key: "reference_currency", message: "expected an ISO 4217 code like USD")
        }
        let fx = try reader.string(top, "fx_rates", at: nil).map(reader.resolve)
        var fxIsFolder: ObjCBool = false
        if let fx, !FileManager.default.fileExists(atPath: fx.path, isDirectory: &fxIsFolder) {
            throw ConfigError(file: path, key: "fx_rates", message: "no such file: \(fx.path)")
        }
        if let fx, fxIsFolder.boolValue {
            throw ConfigError(
                file: path, key: "fx_rates", message: "\(fx.path) is a folder; fx_rates names one CSV file")
        }
        let trust = try reader.stringList(top, "trust", at: nil).map(reader.resolve)
        let trustApple = try reader.bool(top, "trust_apple_root", at: nil) ?? true

        var apps: [App] = []
        for (index, item) in try reader.list(top, "apps", at: nil).enumerated() {
            apps.append(try reader.app(item, at: "apps[\(index)]"))
        }
        if apps.isEmpty {
            throw ConfigError(file: path, key: "apps", message: "at least one app is required")
        }
        let testers = try reader.stringList(top, "testers", at: nil)
        var ruleParams: [String: [String: SQLValue]] = [:]
        if let params = top["rule_params"] {
            guard let map = params as? [String: Any] else {
                throw ConfigError(
                    file: path, key: "rule_params", message: "expected a mapping of rule id to parameters")
            }
            for (ruleID, value) in map {
                guard let values = value as? [String: Any] else {
                    throw ConfigError(
                        file: path, key: "rule_params.\(ruleID)", message: "expected a mapping of parameters")
                }
                var converted: [String: SQLValue] = [:]
                for (name, raw) in values {
                    converted[name] = try reader.scalar(raw, at: "rule_params.\(ruleID).\(name)")
                }
                ruleParams[ruleID] = converted
            }
        }
        var sources: [Source] = []
        for (index, item) in try reader.list(top, "sources", at: nil).enumerated() {
            sources.append(try reader.source(item, at: "sources[\(index)]"))
        }
        var names = Set<String>()
        for source in sources where !names.insert(source.name).inserted {
            throw ConfigError(file: path, key: "sources", message: "the source name '\(source.name)' is used twice")
        }
        let lookback = try reader.integer(top, "lookback_hours", at: nil) ?? 72
        // Hours and days become milliseconds in the window and undo arithmetic: the bounds keep that far from
        // Int64's limit (a larger value once trapped the run after ingest) and are beyond any real need.
        guard (0...Self.maxLookbackHours).contains(lookback) else {
            throw ConfigError(
                file: path, key: "lookback_hours",
                message:
                    "expected a whole number of hours from 0 to \(Self.maxLookbackHours) (ten years), found \(lookback)"
            )
        }
        var config = Config(
            file: file,
            storePath: reader.resolve(postgresStore == nil ? storeText : "state/iapguard.sqlite"),
            postgresStore: postgresStore, rulesDirectory: rules, reportsDirectory: reports,
            referenceCurrency: currency, fxRatesFile: fx, trustedRootFiles: trust, trustAppleRoot: trustApple,
            apps: apps,
            testers: testers, ruleParams: ruleParams, sources: sources, lookbackHours: lookback,
            hash: hash ?? Hashing.sha256Hex(text))
        let horizon = try reader.integer(top, "rewind_horizon_days", at: nil) ?? 30
        guard (1...Self.maxRewindHorizonDays).contains(horizon) else {
            throw ConfigError(
                file: path, key: "rewind_horizon_days",
                message:
                    "expected a whole number of days from 1 to \(Self.maxRewindHorizonDays) (ten years), found \(horizon)"
            )
        }
        config.rewindHorizonDays = horizon
        config.appStoreAPI = try reader.appStoreAPI(top["app_store_api"], apps: apps)
        config.fxFetch = try reader.fxFetch(top["fx"])
        config.ingestHash = ingestFingerprint(
            sources: top["sources"], trust: trust, trustAppleRoot: trustApple, apps: apps)
        return config
    }

    /// The reference data this config puts into the store (apps, catalog, testers; FX rates are loaded separately).
    public var referenceData: ReferenceData {
        var data = ReferenceData()
        data.apps = apps.map {
            ReferenceData.App(
                bundleID: $0.bundleID, appAppleID: $0.appAppleID, environments: $0.environments.map(\.rawValue))
        }
        data.products = apps.flatMap { app in
            app.products.map {
                ReferenceData.Product(
                    bundleID: app.bundleID, productID: $0.productID, type: $0.type, units: $0.units,
                    referencePrice: $0.price, referenceCurrency: $0.currency)
            }
        }
        data.testers = testers
        return data
    }
}

/// Typed access to the parsed YAML with errors that name the key.
struct ConfigReader {
    let file: String
    let base: URL

    func resolve(_ path: String) -> URL {
        if path.hasPrefix("/") { return URL(fileURLWithPath: path).standardizedFileURL }
        return base.appendingPathComponent(path).standardizedFileURL
    }

    private func name(_ key: String, _ at: String?) -> String { at.map { "\($0).\(key)" } ?? key }

    func rejectUnknown(_ map: [String: Any], allowed: Set<String>, at: String?) throws {
        for key in map.keys.sorted() where !allowed.contains(key) {
            throw ConfigError(
                file: file, key: name(key, at),
                message: "unknown key (expected one of: \(allowed.sorted().joined(separator: ", ")))")
        }
    }

    func string(_ map: [String: Any], _ key: String, at: String?) throws -> String? {
        guard let value = map[key], !(value is NSNull) else { return nil }
        if let s = value as? String { return s }
        if let i = value as? Int { return String(i) }
        throw ConfigError(file: file, key: name(key, at), message: "expected text, found \(typeName(value))")
    }

    func requiredString(_ map: [String: Any], _ key: String, at: String?) throws -> String {
        guard let s = try string(map, key, at: at), !s.isEmpty else {
            throw ConfigError(file: file, key: name(key, at), message: "is required")
        }
        return s
    }

    func bool(_ map: [String: Any], _ key: String, at: String?) throws -> Bool? {
        guard let value = map[key], !(value is NSNull) else { return nil }
        guard let b = value as? Bool else {
            throw ConfigError(
                file: file, key: name(key, at), message: "expected true or false, found \(typeName(value))")
        }
        return b
    }

    func integer(_ map: [String: Any], _ key: String, at: String?) throws -> Int64? {
        guard let value = map[key], !(value is NSNull) else { return nil }
        if value is Bool {
            throw ConfigError(file: file, key: name(key, at), message: "expected a whole number, found a boolean")
        }
        if let i = value as? Int { return Int64(i) }
        if let s = value as? String, let i = Int64(s) { return i }
        throw ConfigError(file: file, key: name(key, at), message: "expected a whole number, found \(typeName(value))")
    }

    func list(_ map: [String: Any], _ key: String, at: String?) throws -> [Any] {
        guard let value = map[key], !(value is NSNull) else { return [] }
        guard let list = value as? [Any] else {
            throw ConfigError(file: file, key: name(key, at), message: "expected a list, found \(typeName(value))")
        }
        return list
    }

    func stringList(_ map: [String: Any], _ key: String, at: String?) throws -> [String] {
        try list(map, key, at: at).enumerated().map { index, item in
            if let s = item as? String { return s }
            throw ConfigError(
                file: file, key: "\(name(key, at))[\(index)]", message: "expected text, found \(typeName(item))")
        }
    }

    func mapping(_ value: Any, at: String) throws -> [String: Any] {
        guard let map = value as? [String: Any] else {
            throw ConfigError(file: file, key: at, message: "expected a mapping, found \(typeName(value))")
        }
        return map
    }

    func scalar(_ value: Any, at: String) throws -> SQLValue {
        if let b = value as? Bool { return .integer(b ? 1 : 0) }
        if let i = value as? Int { return .integer(Int64(i)) }
        if let d = value as? Double { return .real(d) }
        if let s = value as? String { return .text(s) }
        throw ConfigError(file: file, key: at, message: "expected a number or text, found \(typeName(value))")
    }

    func app(_ value: Any, at: String) throws -> Config.App {
        let map = try mapping(value, at: at)
        try rejectUnknown(map, allowed: ["bundle_id", "app_apple_id", "environments", "products"], at: at)
        let bundle = try requiredString(map, "bundle_id", at: at)
        let environments = try stringList(map, "environments", at: at).enumerated().map { index, text in
            guard let env = AppleEnvironment(appleValue: text) else {
                throw ConfigError(
                    file: file, key: "\(at).environments[\(index)]",
                    message: "unknown environment '\(text)' (expected Production, Sandbox, Xcode or LocalTesting)")
            }
            return env
        }
        var products: [Config.Product] = []
        for (index, item) in try list(map, "products", at: at).enumerated() {
            let where_ = "\(at).products[\(index)]"
            let p = try mapping(item, at: where_)
            try rejectUnknown(p, allowed: ["product_id", "type", "units", "price", "currency"], at: where_)
            let type = try string(p, "type", at: where_) ?? "Consumable"
            let known = ["Consumable", "Non-Consumable", "Auto-Renewable Subscription", "Non-Renewing Subscription"]
            guard known.contains(type) else {
                throw ConfigError(
                    file: file, key: "\(where_).type",
                    message: "unknown type '\(type)' (expected one of: \(known.joined(separator: ", ")))")
            }
            var price: Int64?
            if let priceValue = p["price"] {
                let text =
                    (priceValue as? String) ?? (priceValue as? Double).map { String($0) }
                    ?? (priceValue as? Int).map(String.init)
                guard let text, let milli = Money.milliunits(fromDecimal: text) else {
                    throw ConfigError(
                        file: file, key: "\(where_).price", message: "expected a decimal price like \"0.99\"")
                }
                price = milli
            }
            products.append(
                Config.Product(
                    productID: try requiredString(p, "product_id", at: where_), type: type,
                    units: try integer(p, "units", at: where_) ?? 1, price: price,
                    currency: try string(p, "currency", at: where_)))
        }
        return Config.App(
            bundleID: bundle, appAppleID: try integer(map, "app_apple_id", at: at),
            environments: environments.isEmpty ? [.production] : environments, products: products)
    }

    func source(_ value: Any, at: String) throws -> Config.Source {
        let map = try mapping(value, at: at)
        try rejectUnknown(
            map,
            allowed: [
                "name", "kind", "format", "path", "query", "url", "password_file", "tls", "max_bad_share",
                "min_records", "absent_columns",
            ], at: at)
        let kindText = try requiredString(map, "kind", at: at)
        guard let kind = Config.Source.Kind(rawValue: kindText) else {
            throw ConfigError(
                file: file, key: "\(at).kind",
                message:
                    "unknown kind '\(kindText)' (expected one of: \(Config.Source.Kind.allCases.map(\.rawValue).joined(separator: ", ")))"
            )
        }
        let formatText = try string(map, "format", at: at) ?? "jsonl"
        guard let format = Config.Source.Format(rawValue: formatText) else {
            throw ConfigError(
                file: file, key: "\(at).format",
                message: "unknown format '\(formatText)' (expected jsonl, csv, sqlite or postgres)")
        }
        if format != .jsonl, kind != .orders, kind != .credits, kind != .users {
            throw ConfigError(file: file, key: "\(at).format", message: "\(kind.rawValue) sources are JSON Lines only")
        }
        let query = try string(map, "query", at: at)
        if format == .sqlite || format == .postgres, query == nil {
            throw ConfigError(file: file, key: "\(at).query", message: "a \(format.rawValue) source needs a query")
        }
        if format == .postgres {
            guard let url = try string(map, "url", at: at) else {
                throw ConfigError(file: file, key: "\(at).url", message: "a postgres source needs a postgres:// url")
            }
            let settings = try postgres(url: url, passwordFile: map["password_file"], tls: map["tls"], at: "\(at).url")
            var source = Config.Source(
                name: try string(map, "name", at: at) ?? kindText, kind: kind, format: format, path: base,
                query: query)
            source.postgres = settings
            return try deliveryLimits(map, at: at, source)
        }
        return try deliveryLimits(
            map, at: at,
            Config.Source(
                name: try string(map, "name", at: at) ?? kindText, kind: kind, format: format,
                path: resolve(try requiredString(map, "path", at: at)), query: query))
    }

    /// `max_bad_share`, `min_records` and `absent_columns` of a source.
    func deliveryLimits(_ map: [String: Any], at: String, _ source: Config.Source) throws -> Config.Source {
        var source = source
        if let value = map["max_bad_share"], !(value is NSNull) {
            let share = (value as? Double) ?? (value as? Int).map(Double.init)
            guard let share, share > 0, share <= 1, !(value is Bool) else {
                throw ConfigError(
                    file: file, key: "\(at).max_bad_share", message: "expected a number above 0 and at most 1")
            }
            source.maxBadShare = share
        }
        if let minimum = try integer(map, "min_records", at: at) {
            guard minimum >= 1 else {
                throw ConfigError(file: file, key: "\(at).min_records", message: "expected a whole number ≥ 1")
            }
            source.minRecords = Int(minimum)
        }
        let absent = try stringList(map, "absent_columns", at: at).map { $0.lowercased() }
        let known = SourceHealth.fieldsRulesNeed(source.kind)
        for (index, column) in absent.enumerated() where !known.contains(column) {
            throw ConfigError(
                file: file, key: "\(at).absent_columns[\(index)]",
                message:
                    "'\(column)' is not a field the rules need from \(source.kind.rawValue) sources (expected one of: \(known.joined(separator: ", ")))"
            )
        }
        source.absentColumns = absent
        return source
    }

    /// PostgreSQL settings from a URL plus the password-file and TLS keys (`nil` when `url` is `nil`).
    func postgres(url: String?, passwordFile: Any?, tls: Any?, at key: String) throws -> PostgresSettings? {
        guard let url else {
            if passwordFile != nil || tls != nil {
                throw ConfigError(
                    file: file, key: key, message: "password file and TLS options need a postgres:// URL")
            }
            return nil
        }
        var settings: PostgresSettings
        do {
            settings = try PostgresSettings.parse(url)
        } catch let error as PostgresSettings.InvalidURL {
            throw ConfigError(file: file, key: key, message: error.message)
        }
        if let passwordFile {
            guard let path = passwordFile as? String, !path.isEmpty else {
                throw ConfigError(file: file, key: key, message: "the password file must be a path")
            }
            settings.passwordFile = resolve(path)
        }
        if let tls {
            let modes = PostgresSettings.TLSMode.allCases.map(\.rawValue)
            guard let text = tls as? String, let mode = PostgresSettings.TLSMode(rawValue: text) else {
                throw ConfigError(
                    file: file, key: key, message: "TLS mode: expected one of \(modes.joined(separator: ", "))")
            }
            settings.tls = mode
        }
        return settings
    }

    private func typeName(_ value: Any) -> String {
        switch value {
        case is Bool: return "a boolean"
        case is Int, is Double: return "a number"
        case is String: return "text"
        case is [Any]: return "a list"
        case is [String: Any]: return "a mapping"
        default: return "\(type(of: value))"
        }
    }
}
