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

    @Test func anUnknownKeyIsAnErrorNamingIt() {
        #expect {
            try Config.parse("apps: [{bundle_id: a, enviroments: [Sandbox]}]", file: file)
        } throws: { error in
            (error as? ConfigError)?.key == "apps[0].enviroments"
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
}
