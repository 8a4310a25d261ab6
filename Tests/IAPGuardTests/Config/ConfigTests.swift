import Foundation
import Testing

@testable import IAPGuard

@Suite struct ConfigTests {
    let file = URL(fileURLWithPath: "/etc/iapguard/iapguard.yml")

    @Test func relativePathsResolveAgainstTheConfigFolder() throws {
        let config = try Config.parse(
            """
            store: state/s.sqlite
            apps: [{bundle_id: com.example, products: [{product_id: p1, units: 10, price: "1.99", currency: EUR}]}]
            sources: [{name: o, kind: orders, format: csv, path: ../data/orders.csv}]
            """, file: file)
        #expect(config.storePath.path == "/etc/iapguard/state/s.sqlite")
        #expect(config.sources[0].path.path == "/etc/data/orders.csv")
        #expect(config.apps[0].environments == [.production])
        #expect(config.apps[0].products[0].price == 1990)
    }

    @Test func theIngestHashFollowsTheSourcesTrustAndAppsButNotWhatOnlyTheRulesRead() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ingest-hash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let configFile = folder.appendingPathComponent("iapguard.yml")
        try Data([1, 2, 3]).write(to: folder.appendingPathComponent("root.der"))
        func hash(
            _ extra: String = "", app: String = "{bundle_id: com.example, environments: [Production]}",
            path: String = "data/orders.csv"
        ) throws -> String {
            try Config.parse(
                """
                apps: [\(app)]
                trust: [root.der]
                sources: [{name: o, kind: orders, format: csv, path: \(path)}]
                \(extra)
                """, file: configFile
            ).ingestHash
        }
        let base = try hash()
        #expect(!base.isEmpty)
        // What the rules read: their parameters, testers, the catalog, the reports folder, comments.
        let tuned = try hash(
            "rule_params: {IAP-014: {grace_hours: 48}}\ntesters: [u-1]\nreports: elsewhere\n# tuned",
            app: "{bundle_id: com.example, environments: [Production], products: [{product_id: p, units: 1}]}")
        #expect(tuned == base)
        // What ingest reads: the sources, the apps' identities and environments, the trusted roots' bytes.
        #expect(try hash(app: "{bundle_id: com.example, environments: [Production, Sandbox]}") != base)
        #expect(try hash(app: "{bundle_id: com.example.other, environments: [Production]}") != base)
        #expect(try hash("trust_apple_root: false") != base)
        #expect(try hash(path: "data/other.csv") != base)
        try Data([1, 2, 4]).write(to: folder.appendingPathComponent("root.der"))
        #expect(try hash() != base)
    }

    @Test func anUnknownKeyIsAnErrorNamingIt() {
        #expect {
            try Config.parse("apps: [{bundle_id: a, enviroments: [Sandbox]}]", file: file)
        } throws: { error in
            (error as? ConfigError)?.key == "apps[0].enviroments"
        }
    }

    /// A YAML error names the line and the key, and never quotes the file: it may hold a database password.
    @Test func aDuplicateKeyNamesItsLinesWithoutQuotingTheFile() {
        let text = "store: postgres://iapguard:S3cretPW@db/iapguard\nreports: r\nlookback_hours: 2\nreports: s\n"
        #expect {
            try Config.parse(text, file: file)
        } throws: { error in
            let message = "\(error)"
            return message.contains("duplicate key reports (lines 2, 4)") && !message.contains("S3cretPW")
        }
        #expect {
            try Config.parse("store: postgres://u:S3cretPW@db/x\nreports: [unclosed\n", file: file)
        } throws: { error in
            let message = "\(error)"
            return message.contains("YAML syntax error") && !message.contains("S3cretPW")
        }
    }

    @Test func aWrongTypeIsAnErrorNamingTheKey() {
        #expect {
            try Config.parse("apps: [{bundle_id: a, products: [{product_id: p, units: lots}]}]", file: file)
        } throws: { error in
            (error as? ConfigError)?.key == "apps[0].products[0].units"
        }
    }

    @Test func anUnknownEnvironmentIsRejected() {
        #expect(throws: ConfigError.self) {
            try Config.parse("apps: [{bundle_id: a, environments: [Staging]}]", file: file)
        }
    }

    /// Block-style YAML as analysts write it: the error must point at the line to fix.
    static let blockConfig = """
        store: state/s.sqlite
        apps:
          - bundle_id: com.example.coins
            products:
              - product_id: com.example.coins.pack100
                units: 100
                price: "0.99"
                currency: USD
              - product_id: com.example.coins.pack500
                units: lots
        sources:
          - name: orders
            kind: orders
            format: csv
            path: orders.csv
          - name: credits
            kind: credits
            format: xml
            path: credits.jsonl
        """

    @Test func aMissingFXRatesFileIsABadConfigNamingTheKey() throws {
        let error = try #require(throws: ConfigError.self) {
            try Config.parse(
                """
                apps: [{bundle_id: com.example}]
                fx_rates: data/no-such-rates.csv
                sources: [{name: o, kind: orders, format: csv, path: orders.csv}]
                """, file: file)
        }
        #expect(error.key == "fx_rates")
        #expect(error.description.contains("no such file: /etc/iapguard/data/no-such-rates.csv"))
    }

    @Test func aRulesPathThatIsNotAFolderIsABadConfigNamingTheKey() throws {
        let error = try #require(throws: ConfigError.self) {
            try Config.parse(
                """
                rules: rulez
                apps: [{bundle_id: com.example}]
                sources: [{name: o, kind: orders, format: csv, path: orders.csv}]
                """, file: file)
        }
        #expect(error.key == "rules")
        #expect(error.description.contains("/etc/iapguard/rulez is not a folder"))
    }

    @Test func aWrongValueDeepInABlockNamesItsLineAndKey() throws {
        let error = try #require(throws: ConfigError.self) { try Config.parse(Self.blockConfig, file: file) }
        #expect(error.key == "apps[0].products[1].units")
        #expect(error.line == 10)
        #expect(error.description.hasPrefix("/etc/iapguard/iapguard.yml:10: apps[0].products[1].units: "))
    }

    @Test func aBadValueInTheSecondListItemNamesItsLine() throws {
        let text = Self.blockConfig.replacingOccurrences(of: "units: lots", with: "units: 500")
        let error = try #require(throws: ConfigError.self) { try Config.parse(text, file: file) }
        #expect(error.key == "sources[1].format")
        #expect(error.line == 18)
    }

    @Test func aMissingKeyPointsAtItsMapping() throws {
        let text = Self.blockConfig.replacingOccurrences(of: "units: lots", with: "units: 500")
            .replacingOccurrences(of: "    format: xml\n", with: "").replacingOccurrences(
                of: "  - name: credits\n    kind: credits\n", with: "  - name: credits\n")
        let error = try #require(throws: ConfigError.self) { try Config.parse(text, file: file) }
        #expect(error.key?.hasPrefix("sources[1]") == true)
        #expect(error.line == 16)
    }

    @Test func keyPathsWithDotsInMappingKeysResolve() throws {
        let text = "rule_params:\n  IAP-014:\n    grace_hours: 24\napps:\n  com.example.x: 1\n"
        #expect(Config.line(ofKeyPath: "rule_params.IAP-014.grace_hours", in: text) == 3)
        #expect(Config.line(ofKeyPath: "apps.com.example.x", in: text) == 5)
        #expect(Config.line(ofKeyPath: "rule_params.IAP-999", in: text) == 1)
    }
}

@Suite struct ConfigRangeTests {
    let file = URL(fileURLWithPath: "/etc/iapguard/iapguard.yml")
    let base = "apps: [{bundle_id: com.example}]\nsources: [{name: o, kind: orders, format: csv, path: orders.csv}]\n"

    /// Hours and days are multiplied into milliseconds: a value near Int64's limit once trapped the run.
    @Test(arguments: [
        ("rewind_horizon_days: 9223372036854775807\n", "rewind_horizon_days"),
        ("rewind_horizon_days: 106751991168\n", "rewind_horizon_days"),
        ("rewind_horizon_days: 3651\n", "rewind_horizon_days"),
        ("lookback_hours: 9223372036854775807\n", "lookback_hours"),
        ("lookback_hours: 87601\n", "lookback_hours"),
    ])
    func aTimeSpanTooLargeToCountInMillisecondsIsABadConfigNamingItsLineAndKey(line: String, key: String) throws {
        let error = try #require(throws: ConfigError.self) { try Config.parse(base + line, file: file) }
        #expect(error.key == key)
        #expect(error.description.hasPrefix("/etc/iapguard/iapguard.yml:3: \(key): expected a whole number"))
    }

    @Test func theLargestAllowedTimeSpansAreAccepted() throws {
        let config = try Config.parse(base + "lookback_hours: 87600\nrewind_horizon_days: 3650\n", file: file)
        #expect(config.lookbackHours == 87_600)
        #expect(config.rewindHorizonDays == 3_650)
    }

    @Test(arguments: ["base_delay_ms: 9223372036854775807", "max_delay_ms: 86400001", "max_retry_after_s: 86401"])
    func aRetryDelayBeyondADayIsABadConfigNamingTheKey(setting: String) throws {
        let text =
            base + "app_store_api:\n  - {name: a, issuer_id: i, key_id: K, key_file: k.p8, retry: {\(setting)}}\n"
        let error = try #require(throws: ConfigError.self) { try Config.parse(text, file: file) }
        let key = String(setting.prefix { $0 != ":" })
        #expect(error.key == "app_store_api[0].retry.\(key)")
    }

    @Test func aRetryAfterBeyondIntIsNamedWithoutTrapping() {
        #expect(ResilientHTTPClient.wholeSeconds(1e30) == "1e+30")
        #expect(ResilientHTTPClient.wholeSeconds(120) == "120")
    }
}
