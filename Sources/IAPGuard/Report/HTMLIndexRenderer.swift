/// Renders `reports/index.html`: every run in the history, newest first, with its counts and a link to its
/// report when the folder is still there.
struct HTMLIndexRenderer {
    let history: [RunHistoryEntry]
    /// Run ids whose `<run-id>/report.html` exists.
    let existingReports: Set<Int64>

    func render() -> String {
        var body = "<header><h1>iapguard reports</h1>\n"
        body +=
            "<p class=\"muted\">\(history.count) run\(history.count == 1 ? "" : "s"), newest first. Counts are active hits (new or recurring).</p></header>\n<main>\n"
        let recent = Array(history.sorted { $0.runID < $1.runID }.suffix(30))
        if !recent.isEmpty {
            body += SVGChart.trend(recent, currentRunID: recent.last?.runID ?? 0) + "\n<p class=\"legend\">"
            for level in Finding.Level.allCases.reversed() {
                body += "<span><span class=\"swatch sw-\(level.rawValue)\"></span>\(level.rawValue)</span>"
            }
            body += "</p>\n"
        }
        body += "<div class=\"wrap\"><table class=\"sortable filterable\"><caption>Runs</caption>\n<thead><tr>"
        body += "<th scope=\"col\" data-type=\"number\">Run</th><th scope=\"col\">Finished (UTC)</th>"
        for level in Finding.Level.allCases.reversed() {
            body += "<th scope=\"col\" class=\"num\" data-type=\"number\">\(level.rawValue)</th>"
        }
        body += "<th scope=\"col\" class=\"num\" data-type=\"number\">All</th>"
        body +=
            "<th scope=\"col\" class=\"num\" data-type=\"number\">Money at risk</th><th scope=\"col\">Report</th></tr></thead><tbody>\n"
        for run in history.sorted(by: { $0.runID > $1.runID }) {
            body += "<tr><th scope=\"row\" data-sort=\"\(run.runID)\">\(run.runID)</th>"
            body += "<td>\(HTMLText.escape(ReportFormat.isoTime(millis: run.finishedAt)))</td>"
            for level in Finding.Level.allCases.reversed() { body += "<td class=\"num\">\(run.count(level))</td>" }
            body += "<td class=\"num\">\(run.total)</td>"
            body +=
                "<td class=\"num\" data-sort=\"\(run.moneyAtRisk)\">\(HTMLText.escape(ReportFormat.decimal(milliunits: run.moneyAtRisk))) \(HTMLText.data(run.referenceCurrency, maxCharacters: 12))</td>"
            if existingReports.contains(run.runID) {
                body +=
                    "<td><a href=\"\(run.runID)/report.html\">report</a> · <a href=\"\(run.runID)/findings.csv\">CSV</a></td>"
            } else {
                body += "<td class=\"none\">removed</td>"
            }
            body += "</tr>\n"
        }
        if history.isEmpty { body += "<tr><td colspan=\"9\" class=\"none\">No runs yet.</td></tr>\n" }
        body += "</tbody></table></div>\n</main>\n"
        return HTMLPage.document(title: "iapguard reports", body: body)
    }
}
