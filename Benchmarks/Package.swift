// swift-tools-version: 6.0
// Benchmarks for iapguard, kept out of the main package so that `swift build` / `swift test` never
// build them. Run in release: swift run -c release --package-path Benchmarks iapguard-bench verify
import PackageDescription

let package = Package(
    name: "iapguard-bench",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "iapguard", path: ".."),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
    ],
    targets: [
        .executableTarget(
            name: "iapguard-bench",
            dependencies: [
                .product(name: "IAPGuard", package: "iapguard"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
