import Foundation
import Testing

@testable import IAPGuard

/// The backend's accounts (`kind: users`): read from CSV and JSON Lines into the `users` view, with errors that
/// name the record, and used by the rules ahead of the orders.
@Suite struct UserAccountSourceTests {
    @Test func accountsFromCSVAndJSONLinesReachTheUsersView() throws {
        let world = try IngestTestWorld()
        try world.write(
            "users.csv",
            """
            user_id,country,app_account_token,application_username,created_at,ignored
            u-1,tur,AAAAAAAA-0000-4000-8000-000000000001,h-1,2026-01-01T00:00:00Z,x
            u-2,USA,,,1767225600000,y

            """)
        try world.write(
            "users.jsonl",
            """
            {"user_id":"u-3","country":"GBR","app_account_token":null,"application_username":"h-3"}
            {"country":"DEU"}

            """)
        let config = try world.config(sources: [
            "{name: accounts, kind: users, format: csv, path: data/users.csv}",
            "{name: more-accounts, kind: users, format: jsonl, path: data/users.jsonl}",
        ])
        _ = try world.run(config)
        let rows = try world.rows(
            config,
            "SELECT user_id, country, app_account_token, application_username, created_at, source_name FROM users ORDER BY user_id"
        )
        #expect(
            rows == [
                ["u-1", "TUR", "aaaaaaaa-0000-4000-8000-000000000001", "h-1", "1767225600000", "accounts"],
                ["u-2", "USA", nil, nil, "1767225600000", "accounts"],
                ["u-3", "GBR", nil, "h-3", nil, "more-accounts"],
            ])
        let quarantined = try world.rows(config, "SELECT location, reason FROM quarantine")
        #expect(quarantined.count == 1)
        #expect(quarantined.first?[0]?.hasSuffix("users.jsonl:2") == true)
        #expect(quarantined.first?[1]?.contains("user_id") == true)
    }

    @Test func aUsersCSVWithoutAUserIDColumnFailsTheSourceLoudly() throws {
        let world = try IngestTestWorld()
        try world.write("users.csv", "id,country\nu-1,TUR\n")
        let config = try world.config(sources: ["{name: accounts, kind: users, format: csv, path: data/users.csv}"])
        let summary = try world.run(config)
        let text = summary.text()
        #expect(text.contains("user_id"), "\(text)")
        #expect(try world.rows(config, "SELECT COUNT(*) FROM users") == [["0"]])
    }

    @Test func aConfigAcceptsUsersInEveryBackendFormat() throws {
        let world = try IngestTestWorld()
        let config = try world.config(sources: [
            "{name: a, kind: users, format: csv, path: data/a.csv}",
            "{name: b, kind: users, format: sqlite, path: data/b.sqlite, query: \"SELECT id AS user_id FROM accounts\"}",
        ])
        #expect(config.sources.map(\.kind) == [.users, .users])
    }

    @Test func aGenuineOtherAppPayloadFailsForItsClaimsNotItsSignature() {
        #expect(VerificationFailure.wrongBundle.isGenuineButNotOurs)
        #expect(VerificationFailure.wrongEnvironment.isGenuineButNotOurs)
        #expect(VerificationFailure.wrongApp.isGenuineButNotOurs)
        for reason in [VerificationFailure.badSignature, .chainUntrusted, .badChain, .oidMissing, .expired, .badAlg] {
            #expect(!reason.isGenuineButNotOurs)
        }
        // The rules compare with the same raw values.
        let (rules, _) = RuleSet.load(from: Self.rulesFolder())
        let sql = rules.filter { ["IAP-004", "IAP-020"].contains($0.id) }.map(\.query).joined()
        #expect(sql.contains("'wrong-bundle'") && sql.contains("'wrong-app'") && sql.contains("'wrong-environment'"))
    }

    static func rulesFolder() -> URL {
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { root.deleteLastPathComponent() }
        return root.appendingPathComponent("rules")
    }
}
