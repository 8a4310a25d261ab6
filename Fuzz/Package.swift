// swift-tools-version: 6.0
// libFuzzer targets for iapguard's parsers. A separate package so the main build and CI do not pay for the
// instrumented build. Build and run with ../scripts/fuzz.sh; see README.md.
import PackageDescription

let targets = [
    "FuzzReceiptLine", "FuzzSignedTransactionLine", "FuzzNotificationLine", "FuzzOrdersCSV", "FuzzConfigYAML",
    "FuzzRuleYAML", "FuzzFXRates", "FuzzJSONDocument",
]

let package = Package(
    name: "iapguard-fuzz",
    platforms: [.macOS(.v13)],
    dependencies: [.package(name: "iapguard", path: "..")],
    targets: [
        .target(name: "FuzzSupport", dependencies: [.product(name: "IAPGuard", package: "iapguard")])
    ]
        + targets.map { .executableTarget(name: $0, dependencies: ["FuzzSupport"]) },
    swiftLanguageModes: [.v6]
)
