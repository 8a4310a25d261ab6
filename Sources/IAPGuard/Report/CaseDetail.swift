import Foundation

/// Everything `iapguard cases show` prints about one case: the case, its findings with their evidence, its
/// triage history and the timeline of the records behind it (the lookup's timeline).
public struct CaseDetail: Sendable {
    public var incident: IncidentCase
    public var findings: [Finding]
    public var history: [CaseEvent]
    public var timeline: [TimelineEvent]
    /// Caveats (a timeline cut short, a lookup that failed).
    public var notes: [String]

    public init(
        incident: IncidentCase, findings: [Finding], history: [CaseEvent], timeline: [TimelineEvent],
        notes: [String] = []
    ) {
        self.incident = incident
        self.findings = findings
        self.history = history
        self.timeline = timeline
        self.notes = notes
    }

    /// The case as JSON: snake_case keys, sorted, pretty printed, a trailing newline.
    public func json() throws -> String {
        struct Body: Encodable {
            var schemaVersion = 1
            var incident: IncidentCase
            var findings: [Finding]
            var history: [CaseEvent]
            var timeline: [TimelineEvent]
            var notes: [String]
            enum CodingKeys: String, CodingKey {
                case schemaVersion, findings, history, timeline, notes
                case incident = "case"
            }
        }
        let encoder = Self.jsonEncoder(pretty: true)
        let body = Body(incident: incident, findings: findings, history: history, timeline: timeline, notes: notes)
        return String(decoding: try encoder.encode(body), as: UTF8.self) + "\n"
    }

    /// The encoder of the cases JSON: snake_case keys as in the lookup's JSON (`findingIDs` →
    /// `finding_ids`), sorted, unescaped slashes; pretty printed or one line.
    public static func jsonEncoder(pretty: Bool) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .custom { path in
            guard let last = path.last, last.intValue == nil else { return path.last ?? CaseCodingKey("") }
            return CaseCodingKey(LookupJSON.snakeCase(last.stringValue))
        }
        return encoder
    }

    /// The case as text for a terminal (at most about 100 columns; ids with control characters shown as
    /// `⟦U+XXXX⟧`).
    public func text() -> String {
        let c = incident
        func t(_ value: String?) -> String { value.map(LookupTextRenderer.clean) ?? "—" }
        var lines: [String] = []
        lines.append("case \(c.caseID): \(c.level.rawValue.uppercased()) · \(c.status.rawValue) (by \(t(c.statusBy)))")
        lines.append("  \(t(c.summary))")
        lines.append(
            "  money at risk \(ReportFormat.money(milliunits: c.moneyAtRisk)) · rules \(c.rules.joined(separator: ", "))"
        )
        lines.append(
            "  anchor transaction \(t(c.anchorTransactionID)) · gaining \(t(c.gainingUserID)) · losing \(t(c.losingUserID))"
        )
        lines.append(
            "  first seen \(c.firstSeenAt.map(TimeParser.iso8601) ?? "—") · last seen \(c.lastSeenAt.map(TimeParser.iso8601) ?? "—")"
        )
        if let note = c.statusNote { lines.append("  note: \(t(note))") }
        lines.append("")
        lines.append("HISTORY")
        for e in history {
            let from = e.from.map { "\($0.rawValue) → " } ?? ""
            lines.append(
                "  \(TimeParser.iso8601(e.at)) \(from)\(e.to.rawValue) by \(t(e.by))\(e.note.map { ": " + t($0) } ?? "")"
            )
        }
        lines.append("")
        lines.append("FINDINGS (\(findings.count))")
        for f in findings {
            lines.append(
                "  \(f.level.rawValue.uppercased()) \(f.ruleID) \(f.status.rawValue) \(f.findingID): \(t(f.summary))")
            let ids = [
                f.transactionID.map { "transaction " + t($0) }, f.orderID.map { "order " + t($0) },
                f.userID.map { "user " + t($0) },
            ].compactMap { $0 }
            if !ids.isEmpty { lines.append("    " + ids.joined(separator: " · ")) }
            for row in f.evidence.prefix(20) {
                let fields = row.fields.map {
                    "\(t($0.name))=\(t(ReportFormat.evidenceValue(name: $0.name, value: $0.value)))"
                }
                lines.append("    [\(t(row.kind))] " + fields.joined(separator: ", "))
            }
            if f.evidence.count > 20 { lines.append("    … \(f.evidence.count - 20) more evidence rows (see --json)") }
        }
        lines.append("")
        lines.append("TIMELINE (UTC)")
        for e in timeline.suffix(60) {
            lines.append("  \(e.utc) \(e.kind.rawValue): \(t(e.description))")
        }
        if timeline.count > 60 { lines.append("  (the latest 60 of \(timeline.count) events; see --json)") }
        for note in notes { lines.append("note: \(t(note))") }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The case as one self-contained HTML page (the reports' escaping and Content-Security-Policy).
    public func html() -> String {
        let c = incident
        func d(_ value: String?) -> String { HTMLText.optional(value, maxCharacters: 400) }
        var b = "<header><h1>iapguard case \(HTMLText.data(c.caseID, maxCharacters: 40))</h1>\n"
        b += "<p><span class=\"lvl lvl-\(c.level.rawValue)\">\(c.level.rawValue)</span> "
        b += "<span class=\"tag\">\(c.status.rawValue)</span> \(d(c.summary))</p></header>\n<main>\n"
        b += "<table class=\"kv\"><caption>Case</caption><tbody>\n"
        let facts: [(String, String?)] = [
            ("Status", c.status.rawValue + " (by " + c.statusBy + ")"), ("Note", c.statusNote),
            ("Money at risk", ReportFormat.money(milliunits: c.moneyAtRisk)),
            ("Rules", c.rules.joined(separator: ", ")),
            ("Anchor transaction", c.anchorTransactionID), ("Gaining account", c.gainingUserID),
            ("Losing account", c.losingUserID), ("First seen", c.firstSeenAt.map(TimeParser.iso8601)),
            ("Last seen", c.lastSeenAt.map(TimeParser.iso8601)),
        ]
        for (name, value) in facts {
            b += "<tr><th scope=\"row\">\(HTMLText.escape(name))</th><td>\(d(value))</td></tr>\n"
        }
        b += "</tbody></table>\n<section><h2>History</h2><div class=\"wrap\"><table><thead><tr>"
        b += "<th scope=\"col\">UTC</th><th scope=\"col\">From</th><th scope=\"col\">To</th><th scope=\"col\">By</th>"
        b += "<th scope=\"col\">Note</th></tr></thead><tbody>\n"
        for e in history {
            b += "<tr><td class=\"nw\">\(HTMLText.escape(TimeParser.iso8601(e.at)))</td><td>\(d(e.from?.rawValue))</td>"
            b += "<td>\(e.to.rawValue)</td><td>\(d(e.by))</td><td>\(d(e.note))</td></tr>\n"
        }
        b += "</tbody></table></div></section>\n<section><h2>Findings (\(findings.count))</h2>\n"
        for f in findings {
            b += "<details open><summary><span class=\"lvl lvl-\(f.level.rawValue)\">\(f.level.rawValue)</span> "
            b += "\(HTMLText.data(f.ruleID, maxCharacters: 24)) <span class=\"tag\">\(f.status.rawValue)</span> "
            b += "\(d(f.summary))</summary>\n"
            var kinds: [String] = []
            for row in f.evidence where !kinds.contains(row.kind) { kinds.append(row.kind) }
            for kind in kinds {
                let rows = f.evidence.filter { $0.kind == kind }.prefix(50)
                var columns: [String] = []
                for row in rows {
                    for field in row.fields where !columns.contains(field.name) { columns.append(field.name) }
                }
                b += "<div class=\"wrap\"><table class=\"evidence\"><caption>Evidence: \(d(kind))</caption><thead><tr>"
                for column in columns { b += "<th scope=\"col\">\(d(column))</th>" }
                b += "</tr></thead><tbody>\n"
                for row in rows {
                    b += "<tr>"
                    for column in columns {
                        let value = row.fields.first { $0.name == column }?.value
                        b += "<td>\(d(ReportFormat.evidenceValue(name: column, value: value)))</td>"
                    }
                    b += "</tr>\n"
                }
                b += "</tbody></table></div>\n"
            }
            b += "</details>\n"
        }
        b += "</section>\n<section><h2>Timeline</h2><div class=\"wrap\"><table class=\"filterable\"><thead><tr>"
        b += "<th scope=\"col\">UTC</th><th scope=\"col\">Event</th><th scope=\"col\">What happened</th>"
        b += "<th scope=\"col\">Source</th></tr></thead><tbody>\n"
        for e in timeline {
            b +=
                "<tr><td class=\"nw\">\(d(e.utc))</td><td>\(d(e.kind.rawValue))</td><td class=\"wide\">\(d(e.description))</td>"
            b += "<td>\(d(e.source))</td></tr>\n"
        }
        b += "</tbody></table></div></section>\n"
        for note in notes { b += "<p class=\"muted\">\(d(note))</p>\n" }
        b += "</main>\n"
        return HTMLPage.document(title: "iapguard case " + c.caseID, body: b)
    }
}

extension CaseDetail {
    /// Lookups at most, to build one case's timeline.
    static let maxTimelineLookups = 20

    /// Loads case `caseID` from `store` (read-only): the case (a merged case is followed), every finding that
    /// belonged to it, its history, and the timeline the lookup builds for its transactions (or, with none,
    /// its orders, else its accounts), merged and de-duplicated.
    public static func load(
        caseID: String, store: any SQLBackedStore, referenceCurrency: String = "USD", graceHours: Int64 = 24,
        renewalCreditShare: Double = 0.2
    ) throws -> CaseDetail {
        let reader = CaseReader(connection: store.connection)
        let incident = try reader.find(caseID)
        let findings = try reader.findings(of: incident.caseID)
        let history = try reader.history(of: incident.caseID)
        var ids: [(String, IDKind)] = []
        func add(_ value: String?, _ kind: IDKind) {
            guard let value, !value.isEmpty, !ids.contains(where: { $0.0 == value && $0.1 == kind }) else { return }
            ids.append((value, kind))
        }
        for f in findings { add(f.transactionID, .transaction) }
        if ids.isEmpty { for f in findings { add(f.orderID, .order) } }
        if ids.isEmpty { for f in findings { add(f.userID, .user) } }
        var notes: [String] = []
        if ids.count > maxTimelineLookups {
            notes.append("timeline of the first \(maxTimelineLookups) of \(ids.count) records")
            ids = Array(ids.prefix(maxTimelineLookups))
        }
        var service = LookupService(store: store, referenceCurrency: referenceCurrency, graceHours: graceHours)
        service.renewalCreditShare = renewalCreditShare
        var seen = Set<String>()
        var timeline: [TimelineEvent] = []
        for (id, kind) in ids {
            do {
                let result = try service.lookup(try LookupQuery(id: id, kind: kind))
                for event in result.timeline {
                    let key = "\(event.at)\u{1F}\(event.kind.rawValue)\u{1F}\(event.description)\u{1F}\(event.source)"
                    if seen.insert(key).inserted { timeline.append(event) }
                }
            } catch {
                notes.append("no timeline for \(kind.rawValue) \(id): \(error)")
            }
        }
        timeline.sort { $0.at != $1.at ? $0.at < $1.at : $0.kind.rank < $1.kind.rank }
        return CaseDetail(incident: incident, findings: findings, history: history, timeline: timeline, notes: notes)
    }
}

/// A key of the cases JSON.
struct CaseCodingKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}
