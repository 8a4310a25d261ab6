import Foundation
import Testing

@testable import IAPGuard

/// A query is exactly one statement: SQLite would otherwise run the first and silently drop the rest.
@Suite struct SQLiteSingleStatementTests {
    @Test func aSecondStatementAfterTheFirstIsAnErrorAndNothingRuns() throws {
        let database = try SQLiteDatabase(path: ":memory:")
        try database.execute("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)")
        #expect(throws: SQLiteError.self) { try database.query("SELECT x FROM t; DELETE FROM t") }
        #expect(throws: SQLiteError.self) { try database.query("SELECT x FROM t; SELECT nonsense FROM nowhere") }
        #expect(try database.query("SELECT COUNT(*) FROM t").first?.first == .integer(1))
        do {
            _ = try database.query("SELECT x FROM t; DELETE FROM t")
        } catch {
            #expect("\(error)".contains("more than one SQL statement"))
        }
    }

    @Test func trailingSemicolonsAndCommentsAreFine() throws {
        let database = try SQLiteDatabase(path: ":memory:")
        #expect(try database.query("SELECT 1;").first?.first == .integer(1))
        #expect(try database.query("SELECT 1; -- why\n  ").first?.first == .integer(1))
        #expect(try database.query("SELECT 1 /* a */ ; /* b */").first?.first == .integer(1))
    }

    @Test func aRuleWhoseQueryHidesASecondStatementFailsValidation() throws {
        let directory = TestScratch.root.appendingPathComponent("iapguard-two-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(
            """
            id: X-001
            title: two statements
            description: a rule whose query smuggles a second statement
            version: "1"
            status: experimental
            level: low
            query: |
              SELECT transaction_id FROM transactions; DELETE FROM credit
            entity_key: [transaction_id]
            """.utf8
        ).write(to: directory.appendingPathComponent("X-001.yaml"))
        let (rules, errors) = RuleSet.load(from: directory)
        let issues = try RuleValidator().validate(rules, now: 0)
        #expect(!errors.isEmpty || issues.contains { $0.severity == .error })
    }
}
