// swift-tools-version: 6.0
// Benchmarks for iapguard, kept out of the main package so that `swift build` / `swift test` never
// build them. Run in release: swift run -c release --package-path Benchmarks iapguard-bench all --size 100k
import PackageDescription

let package = Package(
    name: "iapguard-bench",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "iapguard", path: ".."),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
    ],
    targets: [
        // The system SQLite, for the raw C-API insert floor.
        .systemLibrary(name: "CSQLiteBench", path: "Sources/CSQLiteBench", providers: [.apt(["libsqlite3-dev"])]),
        .executableTarget(
            name: "iapguard-bench",
            dependencies: [
                "CSQLiteBench",
                .product(name: "IAPGuard", package: "iapguard"),
                .product(name: "IAPGuardSampleWorld", package: "iapguard"),
                .product(name: "IAPGuardTesting", package: "iapguard"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
