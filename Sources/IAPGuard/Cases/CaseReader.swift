import Foundation

/// Reads cases from the store's `cases`, `case_findings`, `case_history` and `findings` views (read-only).
public struct CaseReader {
    public let connection: any SQLExecutor

    public init(connection: any SQLExecutor) {
        self.connection = connection
    }

    /// Whether the store has the case tables (a store from before the cases migration has not).
    public func hasCases() throws -> Bool {
        (try? connection.columnNames(of: "cases").isEmpty == false) ?? false
    }

    /// A filter of ``list(_:)``.
    public struct Filter: Sendable {
        public var status: CaseStatus?
        public var level: Finding.Level?
        public var ruleID: String?
        public init(status: CaseStatus? = nil, level: Finding.Level? = nil, ruleID: String? = nil) {
            self.status = status
            self.level = level
            self.ruleID = ruleID
        }
    }

    /// Cases in queue order (open states first, then level, money at risk); merged cases are left out.
    /// Without a status filter, resolved cases with no active finding are left out too.
    public func list(_ filter: Filter = Filter()) throws -> [IncidentCase] {
        guard try hasCases() else { throw CaseError.noCases }
        var sql = "SELECT " + CaseStage.columns.joined(separator: ", ") + " FROM cases WHERE merged_into IS NULL"
        var parameters: [SQLValue] = []
        if let status = filter.status {
            sql += " AND status = ?"
            parameters.append(.text(status.rawValue))
        } else {
            sql += " AND (status <> 'resolved' OR active_findings > 0)"
        }
        if let level = filter.level {
            sql += " AND level = ?"
            parameters.append(.text(level.rawValue))
        }
        var cases = try connection.query(sql, parameters).map(CaseStage.incident(fromRow:))
        if let rule = filter.ruleID { cases = cases.filter { $0.rules.contains(rule) } }
        let members = try memberships(Set(cases.map(\.caseID)))
        for index in cases.indices { cases[index].findingIDs = members[cases[index].caseID] ?? [] }
        return cases.sorted(by: IncidentCase.queueOrder)
    }

    /// One case by id; a case merged into another is followed to it.
    public func find(_ caseID: String) throws -> IncidentCase {
        guard try hasCases() else { throw CaseError.noCases }
        var id = caseID
        for _ in 0..<8 {
            let sql = "SELECT " + CaseStage.columns.joined(separator: ", ") + " FROM cases WHERE case_id = ?"
            guard let row = try connection.query(sql, [.text(id)]).first else { throw CaseError.notFound(caseID) }
            if let into = row[CaseStage.mergedIntoColumn].textValue, into != id {
                id = into
                continue
            }
            var found = CaseStage.incident(fromRow: row)
            found.findingIDs = try memberships([id])[id] ?? []
            return found
        }
        throw CaseError.notFound(caseID)
    }

    /// Active finding ids by case.
    func memberships(_ caseIDs: Set<String>) throws -> [String: [String]] {
        guard !caseIDs.isEmpty else { return [:] }
        var out: [String: [String]] = [:]
        for v in try connection.query(
            "SELECT case_id, finding_id FROM case_findings WHERE active = 1 ORDER BY case_id, finding_id", [])
        {
            guard let caseID = v[0].textValue, caseIDs.contains(caseID), let finding = v[1].textValue else { continue }
            out[caseID, default: []].append(finding)
        }
        return out
    }

    /// Every finding that ever belonged to the case (active ones first), with evidence, from `findings`.
    public func findings(of caseID: String) throws -> [Finding] {
        let json = EvidenceJSON()
        let decoder = JSONDecoder()
        let rows = try connection.query(
            """
            SELECT f.finding_id, f.rule_id, f.rule_version, f.rule_title, f.level, f.status, f.outcome,
                   f.inconclusive_reason, f.transaction_id, f.original_transaction_id, f.order_id, f.user_id,
                   f.bundle_id, f.product_id, f.storefront, f.amount, f.currency, f.amount_ref, f.observed,
                   f.threshold, f.summary, f.evidence_json, f.first_run_id, f.last_run_id
            FROM case_findings m JOIN findings f ON f.finding_id = m.finding_id
            WHERE m.case_id = ?
            ORDER BY m.active DESC, f.rule_id, f.finding_id
            """, [.text(caseID)])
        return rows.map { v in
            var f = Finding(
                findingID: v[0].textValue ?? "", runID: v[23].integerValue ?? 0, ruleID: v[1].textValue ?? "",
                ruleVersion: v[2].textValue ?? "", ruleTitle: v[3].textValue ?? "",
                level: Finding.Level(rawValue: v[4].textValue ?? "") ?? .medium,
                status: Finding.Status(rawValue: v[5].textValue ?? "") ?? .new,
                outcome: Finding.Outcome(rawValue: v[6].textValue ?? "") ?? .hit, summary: v[20].textValue ?? "",
                firstSeenRunID: v[22].integerValue ?? 0)
            f.inconclusiveReason = v[7].textValue
            f.transactionID = v[8].textValue
            f.originalTransactionID = v[9].textValue
            f.orderID = v[10].textValue
            f.userID = v[11].textValue
            f.bundleID = v[12].textValue
            f.productID = v[13].textValue
            f.storefront = v[14].textValue
            f.amount = v[15].integerValue
            f.currency = v[16].textValue
            f.amountRef = v[17].integerValue
            f.observed = v[18].textValue
            f.threshold = v[19].textValue
            f.evidence =
                v[21].textValue.flatMap {
                    json.decodeRows($0) ?? (try? decoder.decode([EvidenceRow].self, from: Data($0.utf8)))
                } ?? []
            return f
        }
    }

    /// The case's history, oldest first.
    public func history(of caseID: String) throws -> [CaseEvent] {
        try connection.query(
            """
            SELECT event_id, case_id, at, run_id, by_name, from_status, to_status, note FROM case_history
            WHERE case_id = ? ORDER BY event_id
            """, [.text(caseID)]
        ).map { v in
            CaseEvent(
                eventID: v[0].integerValue ?? 0, caseID: v[1].textValue ?? "", at: v[2].integerValue ?? 0,
                runID: v[3].integerValue, by: v[4].textValue ?? "", from: v[5].textValue.flatMap(CaseStatus.init),
                to: CaseStatus(rawValue: v[6].textValue ?? "") ?? .open, note: v[7].textValue)
        }
    }

    /// Case id and status of each finding that belongs to a case (for lookups), by finding id.
    public func caseOfFindings(_ findingIDs: [String]) throws -> [String: (caseID: String, status: CaseStatus)] {
        guard !findingIDs.isEmpty, try hasCases() else { return [:] }
        var out: [String: (caseID: String, status: CaseStatus)] = [:]
        for id in Set(findingIDs).sorted() {
            let rows = try connection.query(
                """
                SELECT c.case_id, c.status, c.merged_into FROM case_findings m JOIN cases c ON c.case_id = m.case_id
                WHERE m.finding_id = ?
                """, [.text(id)])
            guard let v = rows.first, let caseID = v[0].textValue else { continue }
            if let into = v[2].textValue, let merged = try? find(into) {
                out[id] = (merged.caseID, merged.status)
            } else {
                out[id] = (caseID, CaseStatus(rawValue: v[1].textValue ?? "") ?? .open)
            }
        }
        return out
    }
}
