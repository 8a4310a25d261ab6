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

    /// A broken rule (its query fails when it runs: a column no view has; or it names a private table and is
    /// not run) makes the run partial (exit 69) and says why on stderr; the other rules still run.
    @Test(arguments: [
        (
            "IAP-020-unconfirmed-credit.yaml", "WHERE c.transaction_id IS NOT NULL\n",
            "WHERE c.no_such_column IS NOT NULL\n", "\"msg\":\"rule failed\",\"rule\":\"IAP-020\""
        ),
        (
            "IAP-017-sandbox-credited-in-production.yaml", "FROM transactions t", "FROM apple_transaction t",
            "reads 'apple_transaction', a private table"
        ),
    ])
    func aBrokenRuleMakesThePartialExitCodeAndSaysWhy(rule: (String, String, String, String)) throws {
        let world = try PipelineTestWorld()
        defer { world.remove() }
        let outcome = try Self.runWithEditedRule(world, rule.0, replacing: rule.1, with: rule.2)
        #expect(outcome.status == 69)
        #expect(outcome.stderr.contains(rule.3), "\(outcome.stderr.suffix(2000))")
    }
}
