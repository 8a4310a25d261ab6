import Foundation
import Testing

@testable import IAPGuard

@Suite("Config: app_store_api and fx")
struct AppStoreAPIConfigTests {
    let file = URL(fileURLWithPath: "/etc/iapguard/iapguard.yml")
    let apps = "apps: [{bundle_id: com.example.coins, environments: [Production, Sandbox]}, {bundle_id: com.example.b}]"

    func parse(_ yaml: String) throws -> Config { try Config.parse(apps + "\n" + yaml, file: file) }

    func key(of yaml: String) -> String? {
        do {
            _ = try parse(yaml)
            return nil
        } catch let error as ConfigError {
            return error.key
        } catch {
            return "\(error)"
        }
    }

    @Test func defaultsAndAMinimalSource() throws {
        let config = try parse("app_store_api: {issuer_id: i, key_id: K, key_file: keys/AuthKey.p8}")
        let api = try #require(config.appStoreAPI.first)
        #expect(config.appStoreAPI.count == 1)
        #expect(api.name == "app_store_api")
        #expect(api.key == .path(URL(fileURLWithPath: "/etc/iapguard/keys/AuthKey.p8")))
        #expect(api.baseURLs[.production]?.absoluteString == "https://api.storekit.apple.com")
        #expect(api.baseURLs[.sandbox]?.absoluteString == "https://api.storekit-sandbox.apple.com")
        #expect(api.maxCallsPerRun == 200)
        #expect(api.lookbackDays == 30)
        #expect(api.pull.notificationTypes.isEmpty)  // all types: renewals and purchases as well as refunds
        #expect(!api.pull.onlyFailures)
        #expect(api.environments == nil)
        #expect(config.fxFetch == nil)
    }

    @Test func appTransactionInfoIsOffByDefaultAndItsCallCapIsChecked() throws {
        let base = "app_store_api: {issuer_id: i, key_id: K, key_file: k.p8, max_calls_per_run: 40"
        let off = try #require(try parse(base + "}").appStoreAPI.first)
        #expect(!off.pull.appTransactionInfo)
        #expect(off.pull.appTransactionCalls(maxCallsPerRun: off.maxCallsPerRun) == 10)
        let on = try #require(
            try parse(base + ", pull: {app_transaction_info: true, app_transaction_calls: 3}}").appStoreAPI.first)
        #expect(on.pull.appTransactionInfo)
        #expect(on.pull.appTransactionCalls(maxCallsPerRun: on.maxCallsPerRun) == 3)
        #expect(key(of: base + ", pull: {app_transaction_calls: 0}}") == "app_store_api.pull.app_transaction_calls")
        #expect(key(of: base + ", pull: {app_transaction_info: maybe}}") == "app_store_api.pull.app_transaction_info")
    }

    @Test func aFullSourceList() throws {
        let config = try parse(
            """
            app_store_api:
              - name: a
                issuer_id: i
                key_id: K
                key_credential: appstore-key
                bundle_ids: [com.example.b]
                environments: [Sandbox]
                base_url: http://127.0.0.1:9000
                max_calls_per_run: 7
                lookback_days: 180
                retry: {max_attempts: 2, base_delay_ms: 5}
                pull: {notifications: false, notification_types: [], only_failures: true}
              - {name: b, issuer_id: i, key_id: K, key_file: k.p8}
            fx: {extra_url: "https://fx.example.com/x.csv"}
            """)
        #expect(config.appStoreAPI.map(\.name) == ["a", "b"])
        let a = config.appStoreAPI[0]
        #expect(a.key == .credential("appstore-key"))
        #expect(a.environments == [.sandbox])
        #expect(a.baseURLs[.production]?.absoluteString == "http://127.0.0.1:9000")
        #expect(a.retry.maxAttempts == 2)
        #expect(a.retry.baseDelay == 0.005)
        #expect(a.pull.notificationTypes.isEmpty)
        #expect(a.pull.onlyFailures)
        #expect(!a.pull.notifications)
        #expect(config.fxFetch?.ecbURL == FXFetchConfig.defaultECBURL)
        #expect(config.fxFetch?.extraURL?.host == "fx.example.com")
    }

    /// Every request carries the API's bearer token: a base URL in plain http is refused unless it is a loopback
    /// test double, and one with a query (request paths would land after it) is refused too.
    @Test func aBaseURLThatWouldSendTheTokenInClearOrMisplaceThePathIsRefused() {
        let base = "app_store_api: {issuer_id: i, key_id: K, key_file: a, "
        #expect(key(of: base + "base_url: \"http://api.storekit.apple.com\"}") == "app_store_api.base_url")
        #expect(
            key(of: base + "base_urls: {Sandbox: \"http://gateway.internal:8080\"}}")
                == "app_store_api.base_urls.Sandbox")
        #expect(key(of: base + "base_url: \"https://api.storekit.apple.com/?x=1\"}") == "app_store_api.base_url")
        #expect(key(of: base + "base_url: \"https://proxy.internal/apple\"}") == nil)
        #expect(key(of: base + "base_url: \"http://127.0.0.1:8080\"}") == nil)
        #expect(key(of: base + "base_url: \"http://localhost:8080\"}") == nil)
        #expect(key(of: base + "base_url: \"http://[::1]:8080\"}") == nil)
    }

    @Test func mistakesNameTheirKey() {
        #expect(key(of: "app_store_api: {issuer_id: i, key_id: K}") == "app_store_api.key_file")
        #expect(
            key(of: "app_store_api: {issuer_id: i, key_id: K, key_file: a, key_credential: b}")
                == "app_store_api.key_file")
        #expect(key(of: "app_store_api: {key_id: K, key_file: a}") == "app_store_api.issuer_id")
        #expect(
            key(of: "app_store_api: {issuer_id: i, key_id: K, key_file: a, lookback_days: 365}")
                == "app_store_api.lookback_days")
        #expect(
            key(of: "app_store_api: {issuer_id: i, key_id: K, key_file: a, bundle_ids: [com.other]}")
                == "app_store_api.bundle_ids[0]")
        #expect(
            key(of: "app_store_api: {issuer_id: i, key_id: K, key_file: a, environments: [Xcode]}")
                == "app_store_api.environments[0]")
        #expect(
            key(of: "app_store_api: {issuer_id: i, key_id: K, key_file: a, base_url: ftp://x}")
                == "app_store_api.base_url")
        #expect(
            key(of: "app_store_api: {issuer_id: i, key_id: K, key_file: a, pull: {refunds: true}}")
                == "app_store_api.pull.refunds")
        #expect(key(of: "fx: {ecb_url: nonsense}") == "fx.ecb_url")
        #expect(
            key(of: "app_store_api: [{issuer_id: i, key_id: K, key_file: a}, {issuer_id: i, key_id: K, key_file: a}]")
                == nil)
        #expect(
            key(
                of:
                    "app_store_api: [{name: x, issuer_id: i, key_id: K, key_file: a}, {name: x, issuer_id: i, key_id: K, key_file: a}]"
            )
                == "app_store_api[1].name")
    }
}
