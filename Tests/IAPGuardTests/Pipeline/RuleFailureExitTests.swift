import Foundation
import Testing

/// A run whose rules are missing or broken is never a green run: cron must see that findings may be missing.
@Suite(.serialized) struct RuleFailureExitTests {
    /// Points the world's config at `folder` as its rules.
    static func useRules(_ world: PipelineTestWorld, _ folder: String) throws {
        let config = try String(contentsOfFile: world.configPath, encoding: .utf8)
        let lines = config.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("rules:") ? "rules: \"\(folder)\"" : String(line)
        }
        try lines.joined(separator: "\n").write(toFile: world.configPath, atomically: true, encoding: .utf8)
    }

    @Test func aRulesFolderThatDoesNotExistIsABadConfigNotAGreenRun() throws {
        let world = try PipelineTestWorld()
        defer { world.remove() }
        try Self.useRules(world, world.directory.appendingPathComponent("rulez").path)
        let outcome = try world.run()
        #expect(outcome.status == 78)
        #expect(outcome.stderr.contains("rulez is not a folder"))
    }

    @Test func aRuleWhoseQueryFailsMakesThePartialExitCodeAndAnErrorLogLine() throws {
        let world = try PipelineTestWorld()
        defer { world.remove() }
        let rules = world.directory.appendingPathComponent("my-rules")
        try FileManager.default.copyItem(at: Fixtures.repoRoot.appendingPathComponent("rules"), to: rules)
        let file = rules.appendingPathComponent("IAP-020-unconfirmed-credit.yaml")
        let text = try String(contentsOf: file, encoding: .utf8)
        // The query reads a column no view has: SQLite refuses it when the rule runs.
        try text.replacingOccurrences(
            of: "WHERE c.transaction_id IS NOT NULL\n", with: "WHERE c.no_such_column IS NOT NULL\n"
        )
        .write(to: file, atomically: true, encoding: .utf8)
        try Self.useRules(world, rules.path)
        let outcome = try world.run()
        #expect(outcome.status == 69)
        #expect(outcome.stderr.contains("\"msg\":\"rule failed\""))
        #expect(outcome.stderr.contains("IAP-020"))
    }
}
