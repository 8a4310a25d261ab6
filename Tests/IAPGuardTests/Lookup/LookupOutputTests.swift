import Foundation
import Testing

@testable import IAPGuard

/// A fake Look Up Order ID: one known Apple order.
struct FakeAppleOrderLookup: AppleOrderLookup {
    var orders: [String: [String]]
    func lookUpOrderID(_ appleOrderID: String) throws -> AppleOrderLookupResult {
        guard let ids = orders[appleOrderID] else { return AppleOrderLookupResult(status: 1, transactionIDs: []) }
        return AppleOrderLookupResult(status: 0, transactionIDs: ids)
    }
}

@Suite("Lookup output")
struct LookupOutputTests {
    nonisolated(unsafe) static let world: Result<LookupTestWorld, any Error> = Result { try LookupTestWorld.standard() }

    func world() throws -> LookupTestWorld { try Self.world.get() }

    /// Regenerate after an intended change with `UPDATE_GOLDEN=1 swift test --skip-build --filter LookupOutputTests`.
    func checkGolden(_ name: String, _ actual: String) throws {
        let golden = Fixtures.local("lookup/\(name)")
        if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] == "1" {
            try Data(actual.utf8).write(to: golden)
            return
        }
        let expected = try String(contentsOf: golden, encoding: .utf8)
        #expect(actual == expected, "\(name) differs from \(golden.path); run with UPDATE_GOLDEN=1 if intended")
    }

    @Test func jsonOfAMisCreditMatchesTheGoldenFile() throws {
        let json = try LookupJSON.encode(try world().lookup("1000000000000004"))
        try checkGolden("mis-credit.json", json)
        #expect(json.contains("\"schema_version\" : 1"))
    }

    @Test func jsonOfAConsentedConsumptionDraftMatchesTheGoldenFile() throws {
        let json = try LookupJSON.encode(try world().lookup("1000000000000060", consented: true))
        try checkGolden("consumption-draft.json", json)
        // Apple's request bodies keep Apple's camelCase keys; everything else is snake_case.
        #expect(json.contains("\"customerConsented\" : true"))
        #expect(json.contains("\"lifetimeDollarsPurchased\""))
        #expect(json.contains("\"consumption_request_reason\" : \"UNINTENDED_PURCHASE\""))
    }

    @Test func jsonIsStableAcrossLookups() throws {
        let a = try LookupJSON.encode(try world().lookup("u-twice", kind: .user))
        let b = try LookupJSON.encode(try world().lookup("u-twice", kind: .user))
        #expect(a == b)
    }

    @Test func snakeCaseKeepsAcronymsTogether() {
        #expect(LookupJSON.snakeCase("transactionID") == "transaction_id")
        #expect(LookupJSON.snakeCase("notificationUUID") == "notification_uuid")
        #expect(LookupJSON.snakeCase("appleRequestV1") == "apple_request_v1")
        #expect(LookupJSON.snakeCase("spendRef") == "spend_ref")
        #expect(LookupJSON.snakeCase("orderIDs") == "order_ids")
        #expect(LookupJSON.snakeCase("relatedTransactionIDs") == "related_transaction_ids")
    }

    @Test func consumptionDraftNeedsConsentAndUsesHistory() throws {
        let without = try world().lookup("1000000000000060")
        let refused = try #require(without.consumptionDrafts.first)
        #expect(refused.state == .notDrafted && refused.appleRequest == nil)
        #expect(refused.reason?.contains("consent") == true)

        let with = try world().lookup("1000000000000060", consented: true)
        let draft = try #require(with.consumptionDrafts.first)
        #expect(draft.state == .draft && draft.requiresApproval)
        #expect(draft.appleRequest?.deliveryStatus == "DELIVERED")
        #expect(draft.appleRequest?.consumptionPercentage == 100_000)
        #expect(draft.appleRequest?.refundPreference == "DECLINE", "two refunds in the last 90 days")
        #expect(draft.appleRequestV1?.refundPreference == 2)
        #expect(draft.appleRequestV1?.appAccountToken == "CCCCCCCC-0000-4000-8000-000000000003")
        #expect(draft.appleRequestV1?.lifetimeDollarsPurchased == 2)
        #expect(draft.basis.contains { $0.hasPrefix("DRAFT") })
    }

    @Test func consumptionDraftUsesTheBackendsSpendingWhenItIsTracked() throws {
        let result = try world().lookup("1000000000000070", consented: true)
        let draft = try #require(result.consumptionDrafts.first)
        #expect(draft.appleRequest?.consumptionPercentage == 40_000)
        #expect(draft.appleRequestV1?.consumptionStatus == 2)
        #expect(draft.basis.contains { $0.contains("40 of 100 units spent") && $0.contains("consumed_units") })
    }

    @Test func textFitsEightyColumnsAndLeadsWithTheAnswer() throws {
        for id in ["1000000000000004", "1000000000000006", "u-cons", "1000000000000060", "nope-404"] {
            let text = LookupTextRenderer().render(try world().lookup(id, consented: true))
            for line in text.split(separator: "\n") {
                #expect(line.count <= 80, "\(id): \(line)")
            }
            #expect(text.contains("ANSWER") || text.contains("NOT FOUND"))
        }
    }

    @Test func hostileIdsAreEscapedInHTMLAndNeutralisedInText() throws {
        var w = try LookupTestWorld()
        let hostile = "<img src=x onerror=alert(1)>\u{202E}gpj.exe"
        w.purchase(
            "1000000000000099", user: hostile, order: "o-\"><script>x()</script>",
            at: LookupTestWorld.now - LookupTestWorld.day)
        w.credit(
            "c-h", tx: "1000000000000099", order: nil, user: hostile,
            at: LookupTestWorld.now - LookupTestWorld.day + 1000)
        try w.commit(runRules: true)
        let result = try w.lookup(hostile)
        #expect(result.found && result.query.matches.map(\.kind) == [.user])
        let html = LookupHTMLRenderer().render(result)
        #expect(!html.contains("<img"))
        #expect(!html.contains("<script>x()"))
        #expect(!html.contains("\u{202E}"))
        #expect(html.contains("&lt;img src=x onerror=alert(1)&gt;"))
        #expect(html.contains("⟦U+202E⟧"))
        #expect(html.contains("Content-Security-Policy"))
        #expect(html.contains("default-src 'none'"))
        let text = LookupTextRenderer().render(result)
        #expect(!text.contains("\u{202E}"))
        #expect(text.contains("⟦U+202E⟧"))
    }

    @Test func notFoundSuggestsKindsAndTheLastRun() throws {
        let result = try world().lookup("9999999999999999")
        #expect(!result.found)
        #expect(result.verdicts.map(\.code) == [.notFound])
        #expect(result.answer.contains { $0.contains("The last run was #1") && $0.contains("not been pulled yet") })
        #expect(result.notes.contains { $0.contains("Look Up Order ID") })
        #expect(LookupExitCode.notFound.rawValue == 3)
        #expect(!RunExitCode.allCases.map(\.rawValue).contains(LookupExitCode.notFound.rawValue))
        let pinned = try world().lookup("U-OK", kind: .user)
        #expect(!pinned.found)
        #expect(pinned.answer.contains { $0.contains("Did you mean") && $0.contains("u-ok") })
        #expect(pinned.answer.contains { $0.contains("try without --kind") })
    }

    @Test func notFoundSuggestsAnAccountOnlyTheAccountsSourceKnows() throws {
        var w = try LookupTestWorld()
        w.account("u-Quiet")
        try w.commit(runRules: false)
        let result = try w.lookup("U-QUIET", kind: .user)
        #expect(!result.found)
        #expect(result.answer.contains { $0.contains("Did you mean") && $0.contains("u-Quiet") })
    }

    @Test func appleOrderIdResolvesThroughTheSeam() throws {
        let fake = FakeAppleOrderLookup(orders: ["MK5TTTVWJH": ["1000000000000002", "1000000000000777"]])
        let service = try world().service(appleOrderLookup: fake)
        let result = try service.lookup(LookupQuery(id: "MK5TTTVWJH", kind: .appleOrder))
        #expect(result.found)
        #expect(result.query.matches.first?.matched == "Apple order with 2 transactions")
        #expect(result.verdicts.map(\.code) == [.missingCredit])
        #expect(result.notes.contains { $0.contains("1000000000000777") && $0.contains("not have been pulled") })
        let unknown = try service.lookup(LookupQuery(id: "MZZZZZZZZZ", kind: .appleOrder))
        #expect(!unknown.found)
    }

    @Test func lookupNeverWritesTheStore() throws {
        let w = try world()
        func fingerprint() -> [Data?] {
            ["", "-wal"].map { FileManager.default.contents(atPath: w.storePath + $0) }
        }
        let before = fingerprint()
        _ = try w.lookup("u-cons", kind: .user, consented: true)
        _ = try w.lookup("nope")
        #expect(fingerprint() == before)
        let readOnly = try SQLiteStore(path: w.storePath, readOnly: true)
        #expect(throws: (any Error).self) { try readOnly.database.execute("DELETE FROM credit") }
    }

    @Test func auditLogAppendsOneLinePerLookupWithoutSecrets() throws {
        let w = try world()
        let log = LookupAuditLog(path: w.directory.appendingPathComponent("audit-\(UUID().uuidString).jsonl"))
        for id in ["1000000000000004", "nope"] {
            let result = try w.lookup(id)
            try log.append(
                LookupAuditLog.entry(
                    for: result, output: "text", store: w.storePath, exitCode: result.found ? 0 : 3,
                    customerConsented: false))
        }
        let entries = try log.entries()
        #expect(entries.count == 2)
        #expect(entries[0].id == "1000000000000004" && entries[0].found && entries[0].verdicts == ["mis-credit"])
        #expect(entries[0].kindsMatched == ["transaction", "original"])
        #expect(entries[1].found == false && entries[1].exitCode == 3)
        #expect(!entries[0].user.isEmpty)
        let attributes = try FileManager.default.attributesOfItem(atPath: log.path.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(
            LookupAuditLog.defaultPath(forStore: URL(fileURLWithPath: "/s/state/x.sqlite")).path
                == "/s/state/x.sqlite.lookup-audit.jsonl")
    }

    @Test func auditLogThatCannotBeWrittenRefusesTheLookup() throws {
        let log = LookupAuditLog(path: URL(fileURLWithPath: "/nonexistent-dir-\(UUID().uuidString)/audit.jsonl"))
        let result = try world().lookup("1000000000000001")
        #expect(throws: LookupError.self) {
            try log.append(
                LookupAuditLog.entry(for: result, output: "text", store: "s", exitCode: 0, customerConsented: false))
        }
    }

    @Test func badIdsAreUsageErrors() {
        #expect(throws: LookupError.self) { try LookupQuery(id: "   ") }
        #expect(throws: LookupError.self) { try LookupQuery(id: "a\u{1B}[2J") }
        #expect(throws: LookupError.self) { try LookupQuery(id: String(repeating: "9", count: 300)) }
        #expect((try? LookupQuery(id: " 123 \n"))?.id == "123")
    }
}
