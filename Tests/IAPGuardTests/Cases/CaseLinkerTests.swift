import Foundation
import Testing

@testable import IAPGuard

/// How findings are linked into incidents, and how a case id follows from its anchor record.
struct CaseLinkerTests {
    static func member(
        _ id: String, _ rule: String, tx: String? = nil, original: String? = nil, order: String? = nil,
        user: String? = nil, key: [(String, String)] = [], level: Finding.Level = .high, amount: Int64? = nil
    ) -> CaseMember {
        CaseMember(
            findingID: id, ruleID: rule, level: level, amountRef: amount, transactionID: tx,
            originalTransactionID: original, orderID: order, userID: user,
            entityKey: key.map { EvidenceField(name: $0.0, value: $0.1) }, summary: "\(rule) \(id)", firstRunID: 1,
            lastSeenRunID: 1)
    }

    @Test func findingsSharingATransactionCreditOrTokenAreOneIncident() {
        let members = [
            Self.member("F1", "IAP-011", tx: "2000000000000010", user: "u-b", key: [("credit_id", "c-1")]),
            Self.member("F2", "IAP-012", user: "u-b", key: [("credit_id", "c-1")]),
            Self.member(
                "F3", "IAP-013", tx: "2000000000000009", user: "u-a",
                key: [("scope", "app_account_token"), ("shared_id", "AAAA-1")]),
            Self.member("F4", "IAP-012", tx: "2000000000000009", user: "u-c", key: [("credit_id", "c-2")]),
            Self.member("F5", "IAP-014", tx: "2000000000000077", user: "u-z"),
        ]
        let groups = CaseLinker.group(members)
        #expect(groups.count == 3)
        let byFinding = Dictionary(
            uniqueKeysWithValues: groups.flatMap { g in g.members.map { (members[$0].findingID, g.anchorKey) } })
        #expect(byFinding["F1"] == byFinding["F2"])
        #expect(byFinding["F3"] == byFinding["F4"])
        #expect(byFinding["F1"] != byFinding["F3"])
        #expect(byFinding["F3"] == "t:2000000000000009")
    }

    @Test func oneAccountsUnrelatedIncidentsStayApartButARepeatedPatternIsOne() {
        let members = [
            // Two arbitrage purchases of one account: one pattern, one incident.
            Self.member("A1", "IAP-008", tx: "2000000000000101", user: "u-1"),
            Self.member("A2", "IAP-008", tx: "2000000000000102", user: "u-1"),
            // The same account's missing credit on another purchase: another incident.
            Self.member("M1", "IAP-014", tx: "2000000000000103", user: "u-1"),
            // Account-level findings of one account link to each other, not to its purchases.
            Self.member("H1", "IAP-009", user: "u-1", key: [("subject_kind", "user"), ("subject", "u-1")]),
            Self.member("R1", "IAP-016", user: "u-1", key: [("user_id", "u-1")]),
        ]
        let groups = CaseLinker.group(members).map { $0.members.map { members[$0].findingID }.sorted() }
        #expect(Set(groups) == [["A1", "A2"], ["M1"], ["H1", "R1"]])
    }

    @Test func theCaseIdDependsOnTheRecordsNotOnTheOrderOfTheFindings() {
        let members = [
            Self.member("F1", "IAP-001", tx: "2000000000000020", user: "u-1"),
            Self.member("F2", "IAP-002", tx: "2000000000000020", original: "2000000000000020", user: "u-2"),
            Self.member("F3", "IAP-015", tx: "999", user: "u-3"),
        ]
        let forward = CaseLinker.group(members)
        let backward = CaseLinker.group(members.reversed())
        #expect(forward.map(\.anchorKey) == backward.map(\.anchorKey))
        // Shorter ids anchor first, so numeric ids compare as numbers.
        #expect(CaseLinker.keyOrder("t:999", "t:2000000000000020"))
        #expect(CaseLinker.caseID(anchorKey: "t:999") == CaseLinker.caseID(anchorKey: "t:999"))
        #expect(CaseLinker.caseID(anchorKey: "t:999").hasPrefix("C-"))
        #expect(CaseLinker.caseID(anchorKey: "t:999").count == 14)
        #expect(CaseLinker.caseID(anchorKey: "t:999", attempt: 1) != CaseLinker.caseID(anchorKey: "t:999"))
    }
}
