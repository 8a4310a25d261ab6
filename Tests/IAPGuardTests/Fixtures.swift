import Foundation

/// Paths to test fixtures: the repo's own (`Tests/IAPGuardTests/Fixtures`) and `../shared/` beside the repo.
enum Fixtures {
    /// The repository root, found from this source file's location.
    static let repoRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A file in this test target's `Fixtures/` folder.
    static func local(_ relative: String) -> URL {
        repoRoot.appendingPathComponent("Tests/IAPGuardTests/Fixtures").appendingPathComponent(relative)
    }

    /// A file in `../shared/` (Apple's samples and certificates).
    static func shared(_ relative: String) -> URL {
        repoRoot.deletingLastPathComponent().appendingPathComponent("shared").appendingPathComponent(relative)
    }
}
