import Foundation

/// Paths to test fixtures, all inside the repository (`Tests/IAPGuardTests/Fixtures`; Apple's samples in
/// `apple/`, see its NOTICE).
enum Fixtures {
    /// The repository root, found from this source file's location.
    static let repoRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A file in this test target's `Fixtures/` folder.
    static func local(_ relative: String) -> URL {
        repoRoot.appendingPathComponent("Tests/IAPGuardTests/Fixtures").appendingPathComponent(relative)
    }
}
