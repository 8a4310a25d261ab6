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

    /// Runs `world` with a copy of the shipped rules in which `file` has `text` replaced by `replacement`.
    static func runWithEditedRule(
        _ world: PipelineTestWorld, _ file: String, replacing text: String, with replacement: String
    ) throws -> PipelineTestWorld.Outcome {
        let rules = world.directory.appendingPathComponent("my-rules")
        try FileManager.default.copyItem(at: Fixtures.repoRoot.appendingPathComponent("rules"), to: rules)
        let url = rules.appendingPathComponent(file)
        let original = try String(contentsOf: url, encoding: .utf8)
        #expect(original.contains(text), "\(file) no longer holds the text the test edits")
        try original.replacingOccurrences(of: text, with: replacement).write(to: url, atomically: true, encoding: .utf8)
        try useRules(world, rules.path)
        return try world.run()
    }

    @Test func aRulesFolderThatDoesNotExistIsABadConfigNotAGreenRun() throws {
        let world = try PipelineTestWorld()
        defer { world.remove() }
        try Self.useRules(world, world.directory.appendingPathComponent("rulez").path)
        let outcome = try world.run()
        #expect(outcome.status == 78)
        #expect(outcome.stderr.contains("rulez is not a folder"))
        // With JSON logs, every line of stderr is JSON: the error is a log event, not a plain line.
        let lines = outcome.stderr.split(separator: "\n").filter { !$0.isEmpty }
        #expect(!lines.isEmpty)
        #expect(lines.allSatisfy { $0.hasPrefix("{") }, "\(lines)")
    }

    @Test func aRuleWhoseQueryFailsMakesThePartialExitCodeAndAnErrorLogLine() throws {
        let world = try PipelineTestWorld()
        defer { world.remove() }
        // The query reads a column no view has: SQLite refuses it when the rule runs.
        let outcome = try Self.runWithEditedRule(
            world, "IAP-020-unconfirmed-credit.yaml", replacing: "WHERE c.transaction_id IS NOT NULL\n",
            with: "WHERE c.no_such_column IS NOT NULL\n")
        #expect(outcome.status == 69)
        #expect(outcome.stderr.contains("\"msg\":\"rule failed\""))
        #expect(outcome.stderr.contains("IAP-020"))
    }

    @Test func aRuleThatReadsAPrivateTableIsNotRunAndTheRunIsPartial() throws {
        let world = try PipelineTestWorld()
        defer { world.remove() }
        let outcome = try Self.runWithEditedRule(
            world, "IAP-017-sandbox-credited-in-production.yaml", replacing: "FROM transactions t",
            with: "FROM apple_transaction t")
        #expect(outcome.status == 69)
        #expect(outcome.stderr.contains("reads 'apple_transaction', a private table"))
    }
}
