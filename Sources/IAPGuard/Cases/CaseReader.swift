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
        let columns = RuleEngine.storedColumns.split(separator: ",").map {
            "f." + $0.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let rows = try connection.query(
            "SELECT " + columns.joined(separator: ", ")
                + " FROM case_findings m JOIN findings f ON f.finding_id = m.finding_id WHERE m.case_id = ?"
                + " ORDER BY m.active DESC, f.rule_id, f.finding_id", [.text(caseID)])
        return rows.compactMap { v in
            guard var f = RuleEngine.storedFinding(v) else { return nil }
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
}
