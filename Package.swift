// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "iapguard",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "IAPGuard", targets: ["IAPGuard"]),
        .library(name: "IAPGuardTesting", targets: ["IAPGuardTesting"]),
        .library(name: "IAPGuardSampleWorld", targets: ["IAPGuardSampleWorld"]),
        .executable(name: "iapguard", targets: ["iapguard"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        // The system SQLite library (Debian: libsqlite3-dev).
        .systemLibrary(
            name: "CSQLite",
            path: "Sources/CSQLite",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        // The pipeline: sources -> verify -> store -> rules -> reports.
        .target(
            name: "IAPGuard",
            dependencies: [
                "CSQLite",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Yams", package: "Yams"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // Test helpers: the one throw-away signing chain shaped like Apple's, for tests, benchmarks and
        // the sample world. Never part of the product library.
        .target(
            name: "IAPGuardTesting",
            dependencies: [
                "IAPGuard",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // The labelled sample-world generator (demo, generate, tests and benchmarks).
        .target(
            name: "IAPGuardSampleWorld",
            dependencies: [
                "IAPGuard",
                "IAPGuardTesting",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // The thin command-line front end.
        .executableTarget(
            name: "iapguard",
            dependencies: [
                "IAPGuard",
                "IAPGuardSampleWorld",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "IAPGuardTests",
            dependencies: ["IAPGuard", "IAPGuardTesting", "IAPGuardSampleWorld"],
            exclude: ["Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
