import Foundation

/// The case stage, after the rule stage stored its findings: links the active findings into incidents
/// (``CaseLinker``), gives each incident its case (keeping the id and triage state of the case its findings
/// already belong to), moves triage states the job is responsible for, and stores it all (`case_state`,
/// `case_finding`, `case_event`; ``CaseSchema``).
///
/// It reads the stored findings, not the run's in-memory result, so an incremental run, a full rebuild and a
/// run in which a rule failed (its earlier findings stay as they were) all see the same active findings.
///
/// What the job does to a case's state:
/// - a new incident is `open`;
/// - a finding the case did not have joins it: a `false-positive`, `confirmed-fraud` or `resolved` case
///   re-opens (`open`, with a history entry naming the findings);
/// - the same findings recur: nothing changes (a decision stays decided); a case the job itself resolved
///   re-opens when its findings are active again;
/// - every finding of an `open` or `investigating` case resolved: the case is `resolved` by the job;
/// - a finding links two cases: the one holding more of the incident's findings absorbs the other
///   (`merged_into`), keeping its own id and state.
public struct CaseStage {
    /// The name the job's own state changes are recorded under.
    public static let jobName = "iapguard"

    public let connection: any SQLExecutor

    public init(connection: any SQLExecutor) {
        self.connection = connection
    }

    /// What one run of the stage did.
    public struct Outcome: Sendable {
        /// The cases with active findings, and the cases closed by this run, in queue order.
        public var cases: [IncidentCase] = []
        public var opened = 0
        public var reopened = 0
        public var resolved = 0
        public var merged = 0
        /// Findings in the largest case (a sign of over-linking when it grows large).
        public var largestCase = 0
    }

    /// A case row as stored before this run.
    struct StoredCase {
        var caseID: String
        var status: CaseStatus
        var statusBy: String
        var statusAt: Int64
        var statusNote: String?
        var activeFindings: Int
        var createdRunID: Int64
        var lastJoinedRunID: Int64
        var mergedInto: String?
        var row: [SQLValue]
    }

    /// Runs the stage for run `runID`. `at` is the time recorded on the job's history entries;
    /// `losingUsers` maps finding ids to the account their evidence says lost out (see
    /// ``losingUserID(userID:evidence:)``).
    public func run(runID: Int64, at: Int64, losingUsers: [String: String] = [:]) throws -> Outcome {
        var members = try activeMembers()
        for index in members.indices {
            members[index].losingUserID = losingUsers[members[index].findingID]
        }
        // Informational findings are context, not work: they never open a case of their own, and join the
        // case of a record they share with an actionable finding.
        let groups = CaseLinker.group(members).filter { group in
            group.members.contains { members[$0].level > .informational }
        }
        let membership = try storedMembership()
        let stored = try storedCases()
        let runTimes = try windowEnds()

        // --- which case each incident is ---
        var candidatesOf: [[String]] = []
        var allCandidates = Set<String>()
        for group in groups {
            var counts: [String: Int] = [:]
            for index in group.members {
                if let caseID = membership[members[index].findingID]?.caseID {
                    counts[stored[caseID]?.mergedInto ?? caseID, default: 0] += 1
                }
            }
            let ranked = counts.keys.sorted { a, b in
                if counts[a] != counts[b] { return counts[a, default: 0] > counts[b, default: 0] }
                let ca = stored[a]?.createdRunID ?? Int64.max
                let cb = stored[b]?.createdRunID ?? Int64.max
                return ca != cb ? ca < cb : a < b
            }
            candidatesOf.append(ranked)
            allCandidates.formUnion(ranked)
        }
        var claimed = Set<String>()
        var chosen: [String] = []
        for (position, group) in groups.enumerated() {
            var id = candidatesOf[position].first { !claimed.contains($0) }
            var attempt = 0
            while id == nil {
                let derived = CaseLinker.caseID(anchorKey: group.anchorKey, attempt: attempt)
                let taken =
                    claimed.contains(derived)
                    || (stored[derived] != nil && allCandidates.contains(derived))
                    || (stored[derived]?.mergedInto != nil)
                if !taken { id = derived }
                attempt += 1
            }
            let caseID = id ?? ""
            claimed.insert(caseID)
            chosen.append(caseID)
        }
        var absorbedInto: [String: String] = [:]
        for position in groups.indices {
            for candidate in candidatesOf[position] where !claimed.contains(candidate) {
                if absorbedInto[candidate] == nil { absorbedInto[candidate] = chosen[position] }
            }
        }

        // --- the cases, their states and what to write ---
        var outcome = Outcome()
        var events: [[SQLValue]] = []
        var statusChanges: [(values: [SQLValue], event: Int)] = []
        func event(_ caseID: String, _ from: CaseStatus?, _ to: CaseStatus, _ note: String) {
            events.append([
                .text(caseID), .integer(at), .integer(runID), .text(Self.jobName), .of(from?.rawValue),
                .text(to.rawValue), .text(note),
            ])
            if let from, from != to {
                statusChanges.append(
                    (
                        [
                            .text(to.rawValue), .text(Self.jobName), .integer(at), .text(note), .text(caseID),
                            .text(from.rawValue),
                        ], events.count - 1
                    ))
            }
        }
        var caseRows: [[SQLValue]] = []
        var membershipRows: [[SQLValue]] = []
        var activeNow = Set<String>()
        for (position, group) in groups.enumerated() {
            let caseID = chosen[position]
            let parts = group.members.map { members[$0] }
            outcome.largestCase = max(outcome.largestCase, parts.count)
            var incident = Self.summarise(
                parts, caseID: caseID, anchorKey: group.anchorKey, anchorTransactionID: group.anchorTransactionID,
                runTimes: runTimes)
            var joined: [CaseMember] = []
            for member in parts {
                activeNow.insert(member.findingID)
                let before = membership[member.findingID]
                let beforeCase = before.map { stored[$0.caseID]?.mergedInto ?? $0.caseID }
                if beforeCase != caseID { joined.append(member) }
                if before?.caseID != caseID || before?.active != true {
                    let joinedRun = before?.caseID == caseID ? (before?.joinedRunID ?? runID) : runID
                    membershipRows.append([
                        .text(member.findingID), .text(caseID), .integer(joinedRun), .integer(1),
                    ])
                }
            }
            let previous = stored[caseID]
            let joinedText = Self.describe(joined)
            var createdRunID = runID
            var lastJoined = runID
            if let previous {
                createdRunID = previous.createdRunID
                // A case keeps its age when it re-opens: its first findings are resolved, not gone.
                let before = Self.incident(fromRow: previous.row)
                if before.firstSeenRunID > 0, before.firstSeenRunID < incident.firstSeenRunID {
                    incident.firstSeenRunID = before.firstSeenRunID
                    incident.firstSeenAt = before.firstSeenAt
                }
                lastJoined = joined.isEmpty ? previous.lastJoinedRunID : runID
                incident.status = previous.status
                incident.statusBy = previous.statusBy
                incident.statusAt = previous.statusAt
                incident.statusNote = previous.statusNote
                var reopen: String?
                switch previous.status {
                case .open, .investigating:
                    break
                case .falsePositive, .confirmedFraud:
                    if !joined.isEmpty { reopen = "re-opened: new finding(s) joined: " + joinedText }
                case .resolved:
                    if !joined.isEmpty {
                        reopen = "re-opened: new finding(s) joined: " + joinedText
                    } else if previous.statusBy == Self.jobName && previous.activeFindings == 0 {
                        reopen = "re-opened: its findings are active again"
                    }
                }
                if let note = reopen {
                    event(caseID, previous.status, .open, note)
                    incident.status = .open
                    incident.statusBy = Self.jobName
                    incident.statusAt = at
                    incident.statusNote = note
                    incident.reopenedThisRun = !joined.isEmpty
                    outcome.reopened += 1
                }
            } else {
                let note = "opened: " + Self.describe(parts)
                event(caseID, nil, .open, note)
                incident.status = .open
                incident.statusBy = Self.jobName
                incident.statusAt = at
                incident.statusNote = note
                outcome.opened += 1
            }
            for (absorbed, into) in absorbedInto.sorted(by: { $0.key < $1.key }) where into == caseID {
                let status = stored[absorbed]?.status ?? .open
                event(caseID, incident.status, incident.status, "absorbed case \(absorbed) (\(status.rawValue))")
                event(absorbed, status, status, "merged into \(caseID): a finding linked the two incidents")
                outcome.merged += 1
            }
            incident.lastJoinedRunID = lastJoined
            caseRows.append(Self.row(incident, createdRunID: createdRunID, runID: runID, mergedInto: nil))
            outcome.cases.append(incident)
        }

        // --- cases no incident claimed: merged away, or every finding resolved ---
        for (caseID, previous) in stored.sorted(by: { $0.key < $1.key }) where !claimed.contains(caseID) {
            if let into = absorbedInto[caseID] {
                var row = previous.row
                row[Self.mergedIntoColumn] = .text(into)
                row[Self.activeFindingsColumn] = .integer(0)
                row[Self.lastRunColumn] = .integer(runID)
                caseRows.append(row)
                continue
            }
            guard previous.activeFindings > 0, previous.mergedInto == nil else { continue }
            var row = previous.row
            row[Self.activeFindingsColumn] = .integer(0)
            // Nothing of it is active any more, so nothing is at risk (its level stays as the record of it).
            row[Self.moneyColumn] = .integer(0)
            row[Self.lastRunColumn] = .integer(runID)
            var incident = Self.incident(fromRow: row)
            if previous.status.isOpen {
                let note = "resolved: every finding of the case resolved"
                event(caseID, previous.status, .resolved, note)
                row[Self.statusColumn] = .text(CaseStatus.resolved.rawValue)
                row[Self.statusByColumn] = .text(Self.jobName)
                row[Self.statusAtColumn] = .integer(at)
                row[Self.statusNoteColumn] = .text(note)
                incident = Self.incident(fromRow: row)
                outcome.resolved += 1
            }
            caseRows.append(row)
            outcome.cases.append(incident)
        }
        for (findingID, entry) in membership.sorted(by: { $0.key < $1.key })
        where entry.active && !activeNow.contains(findingID) {
            membershipRows.append([.text(findingID), .text(entry.caseID), .integer(entry.joinedRunID), .integer(0)])
        }

        try write(cases: caseRows, membership: membershipRows, events: events, statusChanges: statusChanges)
        outcome.cases.sort(by: IncidentCase.queueOrder)
        return outcome
    }

    // MARK: Reading

    /// Active hits (new or recurring, not suppressed, not inconclusive) from the `findings` view.
    func activeMembers() throws -> [CaseMember] {
        let json = EvidenceJSON()
        let decoder = JSONDecoder()
        return try connection.query(
            """
            SELECT finding_id, rule_id, level, amount_ref, transaction_id, original_transaction_id, order_id,
                   user_id, entity_key, summary, first_run_id, last_seen_run_id
            FROM findings
            WHERE outcome = 'hit' AND status IN ('new', 'recurring') AND suppression_json IS NULL
            ORDER BY finding_id
            """, []
        ).map { v in
            let key =
                v[8].textValue.flatMap {
                    json.decodeFields($0) ?? (try? decoder.decode([EvidenceField].self, from: Data($0.utf8)))
                } ?? []
            return CaseMember(
                findingID: v[0].textValue ?? "", ruleID: v[1].textValue ?? "",
                level: Finding.Level(rawValue: v[2].textValue ?? "") ?? .medium, amountRef: v[3].integerValue,
                transactionID: v[4].textValue, originalTransactionID: v[5].textValue, orderID: v[6].textValue,
                userID: v[7].textValue, entityKey: key, summary: v[9].textValue ?? "",
                firstRunID: v[10].integerValue ?? 0, lastSeenRunID: v[11].integerValue ?? 0)
        }
    }

    struct Membership {
        var caseID: String
        var joinedRunID: Int64
        var active: Bool
    }

    func storedMembership() throws -> [String: Membership] {
        var out: [String: Membership] = [:]
        for v in try connection.query("SELECT finding_id, case_id, joined_run_id, active FROM case_finding", []) {
            guard let id = v[0].textValue, let caseID = v[1].textValue else { continue }
            out[id] = Membership(
                caseID: caseID, joinedRunID: v[2].integerValue ?? 0, active: (v[3].integerValue ?? 0) != 0)
        }
        return out
    }

    /// The columns of a `case_state` row, in the order ``row(_:createdRunID:runID:mergedInto:)`` writes them.
    static let columns = [
        "case_id", "anchor_key", "status", "status_by", "status_at", "status_note", "level", "money_at_risk", "rules",
        "active_findings", "anchor_transaction_id", "gaining_user_id", "losing_user_id", "summary",
        "first_seen_run_id", "last_seen_run_id", "first_seen_at", "last_seen_at", "created_run_id",
        "last_joined_run_id", "last_run_id", "merged_into",
    ]
    static let statusColumn = 2
    static let statusByColumn = 3
    static let statusAtColumn = 4
    static let statusNoteColumn = 5
    static let moneyColumn = 7
    static let activeFindingsColumn = 9
    static let lastRunColumn = 20
    static let mergedIntoColumn = 21

    /// Every stored case, by id.
    func storedCases() throws -> [String: StoredCase] {
        var out: [String: StoredCase] = [:]
        let sql = "SELECT " + Self.columns.joined(separator: ", ") + " FROM case_state"
        for v in try connection.query(sql, []) {
            guard let id = v[0].textValue else { continue }
            out[id] = StoredCase(
                caseID: id, status: CaseStatus(rawValue: v[2].textValue ?? "") ?? .open,
                statusBy: v[3].textValue ?? "", statusAt: v[4].integerValue ?? 0, statusNote: v[5].textValue,
                activeFindings: Int(v[9].integerValue ?? 0), createdRunID: v[18].integerValue ?? 0,
                lastJoinedRunID: v[19].integerValue ?? 0, mergedInto: v[21].textValue, row: v)
        }
        return out
    }

    /// Run id → the end of its window (epoch ms).
    func windowEnds() throws -> [Int64: Int64] {
        var out: [Int64: Int64] = [:]
        for v in try connection.query("SELECT run_id, window_until FROM run WHERE window_until IS NOT NULL", []) {
            if let id = v[0].integerValue, let until = v[1].integerValue { out[id] = until }
        }
        return out
    }

    // MARK: Building

    /// The case of one incident (state left `open`; the caller sets it).
    static func summarise(
        _ parts: [CaseMember], caseID: String, anchorKey: String, anchorTransactionID: String?,
        runTimes: [Int64: Int64]
    ) -> IncidentCase {
        let ranked = parts.sorted { a, b in
            if a.level != b.level { return a.level > b.level }
            let am = a.amountRef ?? Int64.min
            let bm = b.amountRef ?? Int64.min
            return am != bm ? am > bm : a.findingID < b.findingID
        }
        var money: [String: Int64] = [:]
        for part in parts {
            guard let amount = part.amountRef else { continue }
            let key = part.transactionID.map { "t:" + $0 } ?? "f:" + part.findingID
            money[key] = max(money[key] ?? Int64.min, amount)
        }
        var users: [String: Int] = [:]
        for part in parts { if let user = part.userID { users[user, default: 0] += 1 } }
        let gaining = users.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.first?.key
        let losing = ranked.lazy.compactMap(\.losingUserID).first { $0 != gaining }
        let first = parts.map(\.firstRunID).min() ?? 0
        let last = parts.map(\.lastSeenRunID).max() ?? 0
        let top = ranked.first
        var summary = top?.summary ?? ""
        if parts.count > 1 { summary += " (+\(parts.count - 1) more finding\(parts.count == 2 ? "" : "s"))" }
        var incident = IncidentCase(
            caseID: caseID, anchorKey: anchorKey, status: .open, statusBy: jobName, statusAt: 0,
            level: top?.level ?? .informational, moneyAtRisk: money.values.reduce(0, +),
            rules: Array(Set(parts.map(\.ruleID))).sorted(), findingIDs: parts.map(\.findingID).sorted(),
            summary: summary, firstSeenRunID: first, lastSeenRunID: last)
        incident.anchorTransactionID = anchorTransactionID
        incident.gainingUserID = gaining
        incident.losingUserID = losing
        incident.firstSeenAt = runTimes[first]
        incident.lastSeenAt = runTimes[last]
        return incident
    }

    /// `IAP-011 F…, IAP-012 F…` for a history note (at most five, then a count).
    static func describe(_ parts: [CaseMember]) -> String {
        let sorted = parts.sorted { ($0.ruleID, $0.findingID) < ($1.ruleID, $1.findingID) }
        var text = sorted.prefix(5).map { "\($0.ruleID) \($0.findingID)" }.joined(separator: ", ")
        if sorted.count > 5 { text += " and \(sorted.count - 5) more" }
        return text
    }

    static func row(_ c: IncidentCase, createdRunID: Int64, runID: Int64, mergedInto: String?) -> [SQLValue] {
        [
            .text(c.caseID), .text(c.anchorKey), .text(c.status.rawValue), .text(c.statusBy), .integer(c.statusAt),
            .of(c.statusNote), .text(c.level.rawValue), .integer(c.moneyAtRisk), .text(c.rules.joined(separator: ",")),
            .integer(Int64(c.findingIDs.count)), .of(c.anchorTransactionID), .of(c.gainingUserID), .of(c.losingUserID),
            .text(c.summary), .integer(c.firstSeenRunID), .integer(c.lastSeenRunID), .of(c.firstSeenAt),
            .of(c.lastSeenAt), .integer(createdRunID), .integer(c.lastJoinedRunID), .integer(runID), .of(mergedInto),
        ]
    }

    /// A case from a `case_state` row (its finding ids are not in the row: left empty).
    static func incident(fromRow v: [SQLValue]) -> IncidentCase {
        var c = IncidentCase(
            caseID: v[0].textValue ?? "", anchorKey: v[1].textValue ?? "",
            status: CaseStatus(rawValue: v[2].textValue ?? "") ?? .open, statusBy: v[3].textValue ?? "",
            statusAt: v[4].integerValue ?? 0, statusNote: v[5].textValue,
            level: Finding.Level(rawValue: v[6].textValue ?? "") ?? .informational,
            moneyAtRisk: v[7].integerValue ?? 0,
            rules: (v[8].textValue ?? "").split(separator: ",").map(String.init), findingIDs: [],
            summary: v[13].textValue ?? "", firstSeenRunID: v[14].integerValue ?? 0,
            lastSeenRunID: v[15].integerValue ?? 0)
        c.anchorTransactionID = v[10].textValue
        c.gainingUserID = v[11].textValue
        c.losingUserID = v[12].textValue
        c.firstSeenAt = v[16].integerValue
        c.lastSeenAt = v[17].integerValue
        c.lastJoinedRunID = v[19].integerValue ?? 0
        return c
    }

    // MARK: Writing

    /// Writes the stage's rows. An existing case's state is changed only by the guarded updates of
    /// `statusChanges` (to, by, at, note, case id, expected current state; and the index of its history
    /// entry), so an analyst's `set-status` committed while the run was working is never overwritten.
    func write(
        cases: [[SQLValue]], membership: [[SQLValue]], events: [[SQLValue]],
        statusChanges: [(values: [SQLValue], event: Int)]
    ) throws {
        try connection.transaction {
            let statusColumns: Set<String> = ["status", "status_by", "status_at", "status_note"]
            let caseSQL =
                "INSERT INTO case_state (" + Self.columns.joined(separator: ", ") + ") VALUES ("
                + Array(repeating: "?", count: Self.columns.count).joined(separator: ", ") + ") "
                + connection.dialect.upsert(
                    conflict: ["case_id"], update: Self.columns.dropFirst().filter { !statusColumns.contains($0) })
            for row in cases { _ = try connection.run(caseSQL, row) }
            // A state changed by an analyst since it was read is left alone, and so is its history entry.
            var superseded = Set<Int>()
            for change in statusChanges {
                let updated = try connection.run(
                    """
                    UPDATE case_state SET status = ?, status_by = ?, status_at = ?, status_note = ?
                    WHERE case_id = ? AND status = ?
                    """, change.values)
                if updated == 0 { superseded.insert(change.event) }
            }
            let memberSQL =
                "INSERT INTO case_finding (finding_id, case_id, joined_run_id, active) VALUES (?, ?, ?, ?) "
                + connection.dialect.upsert(conflict: ["finding_id"], update: ["case_id", "joined_run_id", "active"])
            for row in membership { _ = try connection.run(memberSQL, row) }
            for (index, row) in events.enumerated() where !superseded.contains(index) {
                try Self.appendEvent(row, connection)
            }
        }
    }

    /// Appends one history row: case id, at, run id, by, from, to, note.
    static func appendEvent(_ row: [SQLValue], _ connection: any SQLExecutor) throws {
        _ = try connection.run(
            """
            INSERT INTO case_event (case_id, at, run_id, by_name, from_status, to_status, note)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """, row)
    }

    // MARK: Evidence

    /// Evidence fields that name the account that lost out.
    static let losingFields: Set<String> = [
        "order_user_id", "owner_user_id", "token_owner_user_id", "token_owner", "paid_by", "buyer_user_id",
        "victim_user_id",
    ]

    /// The account a finding's evidence says lost out: a field naming the order's or token's owner, else the
    /// user of an `order` evidence row, when it is not the finding's own account.
    public static func losingUserID(userID: String?, evidence: [EvidenceRow]) -> String? {
        for row in evidence {
            for field in row.fields where losingFields.contains(field.name) {
                if let value = field.value, !value.isEmpty, value != userID { return value }
            }
        }
        for row in evidence where row.kind == "order" {
            for field in row.fields where field.name == "user_id" {
                if let value = field.value, !value.isEmpty, value != userID { return value }
            }
        }
        return nil
    }
}

extension CaseStage {
    /// The cases of `findings` without a store: the active hits linked as the stage links them, every case
    /// `open` with the id derived from its anchor (what a first run on an empty store gives them). For
    /// report fixtures and backtests.
    public static func cases(of findings: [Finding]) -> [IncidentCase] {
        let members = findings.filter {
            $0.outcome == .hit && ($0.status == .new || $0.status == .recurring) && $0.suppression == nil
        }.map { f in
            CaseMember(
                findingID: f.findingID, ruleID: f.ruleID, level: f.level, amountRef: f.amountRef,
                transactionID: f.transactionID, originalTransactionID: f.originalTransactionID, orderID: f.orderID,
                userID: f.userID, entityKey: f.entityKey, summary: f.summary, firstRunID: f.firstSeenRunID,
                lastSeenRunID: f.runID, losingUserID: losingUserID(userID: f.userID, evidence: f.evidence))
        }
        var claimed = Set<String>()
        return CaseLinker.group(members).map { group in
            var attempt = 0
            var id = CaseLinker.caseID(anchorKey: group.anchorKey)
            while claimed.contains(id) {
                attempt += 1
                id = CaseLinker.caseID(anchorKey: group.anchorKey, attempt: attempt)
            }
            claimed.insert(id)
            var incident = summarise(
                group.members.map { members[$0] }, caseID: id, anchorKey: group.anchorKey,
                anchorTransactionID: group.anchorTransactionID, runTimes: [:])
            incident.statusNote = "opened"
            return incident
        }.sorted(by: IncidentCase.queueOrder)
    }
}
