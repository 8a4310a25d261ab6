/// The case queue at the top of `report.html`: one row per case, highest priority first, then each case as a
/// `<details>` with its findings and their evidence. Filtering by level, rule and status is the page's
/// script (it reads the `data-level`, `data-status` and `data-rules` attributes, whose values are fixed
/// words and rule ids reduced to `[A-Za-z0-9-_]`); without JavaScript every case is shown.
extension HTMLReportRenderer {
    /// Rows of the queue table at most (`cases.csv` has every case).
    static let maxQueueRows = 1_000
    /// Cases shown expanded with their findings and evidence at most.
    static let maxCaseDetails = 200
    /// Findings shown in full inside one case at most.
    static let maxFindingsPerCase = 10

    func caseQueueSection() -> String {
        var out = "<section id=\"cases\" aria-labelledby=\"h-cases\">\n<h2 id=\"h-cases\">Case queue</h2>\n"
        let cases = model.cases
        guard !cases.isEmpty else {
            return out + "<p class=\"none\">No cases in this run.</p>\n</section>\n"
        }
        let open = cases.filter { $0.status.isOpen && !$0.findingIDs.isEmpty }.count
        let money = cases.filter(\.status.isOpen).reduce(Int64(0)) { $0 + $1.moneyAtRisk }
        out += "<p><span class=\"big\">\(open) open case\(open == 1 ? "" : "s")</span> · "
        out += "<span class=\"big\">\(self.money(money))</span> at risk in them "
        out += "<span class=\"muted\">(one case per incident; money counted once per case)</span></p>\n"
        out += "<div id=\"case-filters\" class=\"filters\"></div>\n"
        let shown = cases.prefix(Self.maxQueueRows)
        out += "<div class=\"wrap\"><table class=\"cases sortable\"><caption>Cases by priority: open first, "
        out += "then highest level and most money</caption>\n<thead><tr>"
        out += "<th scope=\"col\" class=\"num\" data-type=\"number\">Priority</th>"
        out += "<th scope=\"col\" data-type=\"number\">Level</th><th scope=\"col\">Status</th>"
        out +=
            "<th scope=\"col\" class=\"num\" data-type=\"number\">At risk (\(HTMLText.plain(currency, maxCharacters: 12)))</th>"
        out += "<th scope=\"col\">Case</th><th scope=\"col\">Rules</th><th scope=\"col\">Transaction</th>"
        out += "<th scope=\"col\">Gaining account</th><th scope=\"col\">Losing account</th>"
        out += "<th scope=\"col\">Summary</th></tr></thead><tbody>\n"
        let short = min(cap, 60)
        for (index, c) in shown.enumerated() {
            let anchor = "case-" + HTMLText.anchor(c.caseID)
            out += "<tr \(filterAttributes(c))><td class=\"num\" data-sort=\"\(index + 1)\">\(index + 1)</td>"
            out += "<td data-sort=\"\(c.level.rank)\">\(levelBadge(c.level))</td><td class=\"nw\">\(statusText(c))</td>"
            out += "<td class=\"num\" data-sort=\"\(c.moneyAtRisk)\">"
            out += HTMLText.escape(ReportFormat.money(milliunits: c.moneyAtRisk)) + "</td>"
            let link = index < Self.maxCaseDetails ? "<a href=\"#\(anchor)\">" : ""
            out += "<td class=\"mono nw\">\(link)\(HTMLText.data(c.caseID, maxCharacters: 40))"
            out += (link.isEmpty ? "" : "</a>") + "</td>"
            out += "<td>\(HTMLText.data(c.rules.joined(separator: " "), maxCharacters: cap))</td>"
            out += "<td class=\"mono nw\">\(HTMLText.optional(c.anchorTransactionID, maxCharacters: short))</td>"
            out += "<td class=\"mono nw\">\(HTMLText.optional(c.gainingUserID, maxCharacters: short))</td>"
            out += "<td class=\"mono nw\">\(HTMLText.optional(c.losingUserID, maxCharacters: short))</td>"
            out += "<td class=\"wide\">\(HTMLText.data(c.summary, maxCharacters: cap))</td></tr>\n"
        }
        out += "</tbody></table></div>\n"
        if cases.count > shown.count {
            out += "<p class=\"warn\">\(cases.count - shown.count) more cases not shown here; "
            out += "<a href=\"cases.csv\">cases.csv</a> has them all.</p>\n"
        }
        var byID: [String: Int] = [:]
        for (index, finding) in model.findings.enumerated() where byID[finding.findingID] == nil {
            byID[finding.findingID] = index
        }
        for (index, c) in cases.prefix(Self.maxCaseDetails).enumerated() {
            out += caseDetails(c, priority: index + 1, findingIndex: byID)
        }
        if cases.count > Self.maxCaseDetails {
            out += "<p class=\"muted\">The first \(Self.maxCaseDetails) cases are shown with their evidence; "
            out += "the per-rule sections below and the CSV files have the rest.</p>\n"
        }
        return out + "</section>\n"
    }

    /// `data-*` attributes the filter script reads: fixed words, and rule ids reduced to `[A-Za-z0-9-_]`.
    private func filterAttributes(_ c: IncidentCase) -> String {
        let rules = c.rules.map(HTMLText.anchor).joined(separator: " ")
        return
            "data-case=\"\(HTMLText.anchor(c.caseID))\" data-level=\"\(c.level.rawValue)\" data-status=\"\(c.status.rawValue)\" data-rules=\"\(rules)\""
    }

    private func statusText(_ c: IncidentCase) -> String {
        var text = HTMLText.escape(c.status.rawValue)
        if c.reopenedThisRun { text += " <span class=\"tag\">re-opened: new finding</span>" }
        return text
    }

    private func caseDetails(_ c: IncidentCase, priority: Int, findingIndex: [String: Int]) -> String {
        let anchor = "case-" + HTMLText.anchor(c.caseID)
        var out = "<details class=\"case\" id=\"\(anchor)\" \(filterAttributes(c))><summary>#\(priority) "
        out += "\(levelBadge(c.level)) <span class=\"tag\">\(HTMLText.escape(c.status.rawValue))</span> "
        out += "\(money(c.moneyAtRisk)) — <span class=\"mono\">\(HTMLText.data(c.caseID, maxCharacters: 40))</span> "
        out += "\(HTMLText.data(c.summary, maxCharacters: cap))</summary>\n"
        out += "<table class=\"kv\"><caption>Case \(HTMLText.data(c.caseID, maxCharacters: 40))</caption><tbody>\n"
        var status = HTMLText.escape(c.status.rawValue) + " (by " + HTMLText.data(c.statusBy, maxCharacters: 80) + ")"
        if c.reopenedThisRun { status += " — re-opened in this run: a new finding joined" }
        out += row("Status", status)
        if let note = c.statusNote { out += row("Note", HTMLText.data(note, maxCharacters: cap * 2)) }
        out += row("Rules", HTMLText.data(c.rules.joined(separator: ", "), maxCharacters: cap))
        out += row("Anchor transaction", mono(c.anchorTransactionID))
        out += row("Gaining account", mono(c.gainingUserID))
        out += row("Losing account", mono(c.losingUserID))
        out += row("First seen", c.firstSeenAt.map { HTMLText.escape(ReportFormat.shortTime(millis: $0)) } ?? "—")
        out += row("Last seen", c.lastSeenAt.map { HTMLText.escape(ReportFormat.shortTime(millis: $0)) } ?? "—")
        out += row("Active findings", String(c.findingIDs.count))
        out += "</tbody></table>\n"
        let findings = c.findingIDs.compactMap { findingIndex[$0].map { model.findings[$0] } }
            .sorted(by: ReportModel.hitOrder)
        if findings.isEmpty {
            out += "<p class=\"none\">No active finding: every finding of this case has resolved.</p>\n"
        }
        for (index, finding) in findings.prefix(Self.maxFindingsPerCase).enumerated() {
            out += "<p class=\"muted\">\(HTMLText.data(finding.ruleID, maxCharacters: 24)) · "
            out += "\(HTMLText.data(finding.ruleTitle, maxCharacters: cap))</p>\n"
            out += hitDetails(finding, anchor: "\(anchor)-f\(index + 1)")
        }
        if findings.count > Self.maxFindingsPerCase {
            out += "<p class=\"warn\">\(findings.count - Self.maxFindingsPerCase) more findings of this case in "
            out += "<a href=\"findings.csv\">findings.csv</a>.</p>\n"
        }
        return out + "</details>\n"
    }
}
