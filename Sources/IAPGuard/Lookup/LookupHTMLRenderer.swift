/// Renders a ``LookupResult`` as one self-contained HTML page to attach to a support case. Every value from
/// the data goes through ``HTMLText`` (escaped, control and bidi characters neutralised) and the page uses the
/// reports' frame: a strict Content-Security-Policy, no external resources.
public struct LookupHTMLRenderer {
    public init() {}

    public func render(_ result: LookupResult) -> String {
        var b = ""
        b += "<header><h1>Support lookup: \(d(result.query.id))</h1>\n"
        var meta = "As of \(d(StorefrontTime.shortUTC(result.asOf)))"
        if let run = result.lastRun {
            meta +=
                " · last run #\(run.runID) \(d(run.status)), finished \(d(run.finishedAt.map(StorefrontTime.shortUTC) ?? "not finished"))"
        }
        b += "<p class=\"muted\">\(meta) · reference currency \(d(result.referenceCurrency))</p></header>\n"
        b += "<main>\n"
        if result.found {
            b +=
                "<p>Matched as: "
                + result.query.matches.map { "<span class=\"tag\">\(d($0.kind.label))</span> \(d($0.matched))" }
                .joined(separator: "; ") + "</p>\n"
        }
        b += "<section><h2>\(result.found ? "Answer" : "Not found")</h2>\n<ul>\n"
        for line in result.answer { b += "<li>\(d(line))</li>\n" }
        b += "</ul></section>\n"

        if result.found && !result.verdicts.isEmpty {
            b += "<section><h2>Verdicts</h2>\n<div class=\"wrap\"><table class=\"sortable filterable\">\n"
            b += "<thead><tr><th>verdict</th><th>transaction</th><th>paid by</th><th>credited to</th>"
            b += "<th>orders</th><th>explanation</th></tr></thead>\n<tbody>\n"
            for v in result.verdicts {
                b += "<tr><td class=\"nw\"><span class=\"tag\">\(d(v.code.rawValue))</span>"
                if let lookAlike = v.lookAlike { b += "<br><span class=\"muted\">look-alike: \(d(lookAlike))</span>" }
                b += "</td><td class=\"id\">\(o(v.transactionID))"
                for related in v.relatedTransactionIDs { b += "<br>\(d(related))" }
                b += "</td><td>\(o(v.paidBy))</td><td>\(o(v.creditedTo.joined(separator: ", ")))</td>"
                b += "<td>\(o(v.orderIDs.joined(separator: ", ")))</td><td class=\"wide\">\(d(v.headline))"
                if !v.details.isEmpty { b += "<ul>" + v.details.map { "<li>\(d($0))</li>" }.joined() + "</ul>" }
                for f in v.flaggedBy { b += "<p><strong>Flagged:</strong> \(d(f))</p>" }
                if let action = v.action { b += "<p><strong>Action:</strong> \(d(action))</p>" }
                b += "</td></tr>\n"
            }
            b += "</tbody></table></div></section>\n"
        }

        for user in result.users {
            b += "<section><h2>User \(d(user.userID))</h2>\n<table class=\"kv\"><tbody>\n"
            let rows: [(String, String)] = [
                ("purchases", String(user.purchaseCount)),
                ("spend", Money.decimalText(milliunits: user.spendRef) + " " + user.referenceCurrency),
                ("purchases without an FX rate", String(user.unconvertedPurchases)),
                (
                    "refunds",
                    "\(user.refundCount) (\(Money.decimalText(milliunits: user.refundedRef)) \(user.referenceCurrency))"
                ),
                ("sandbox purchases", String(user.sandboxPurchases)),
                ("storefronts", user.storefronts.joined(separator: ", ")),
                ("countries", user.countries.joined(separator: ", ")),
                ("orders", String(user.orders)),
                ("credits standing / reversed", "\(user.standingCredits) / \(user.reversedCredits)"),
                ("tester", user.tester ? "yes" : "no"),
                ("first seen", user.firstSeen.map(StorefrontTime.shortUTC) ?? ""),
                ("last seen", user.lastSeen.map(StorefrontTime.shortUTC) ?? ""),
                ("account record", user.account.map(LookupService.describe) ?? "none in the accounts source"),
            ]
            for (name, value) in rows { b += "<tr><th scope=\"row\">\(d(name))</th><td>\(o(value))</td></tr>\n" }
            b += "</tbody></table></section>\n"
        }

        if !result.findings.isEmpty {
            b += "<section><h2>Findings</h2>\n<div class=\"wrap\"><table class=\"sortable filterable\">\n"
            b += "<thead><tr><th>level</th><th>rule</th><th>status</th><th>summary</th><th>transaction</th>"
            b += "<th>order</th><th>user</th><th>case</th></tr></thead>\n<tbody>\n"
            for f in result.findings {
                let level = HTMLText.anchor(f.level)
                b += "<tr><td data-sort=\"\(f.levelRank)\"><span class=\"lvl lvl-\(level)\">\(d(f.level))</span></td>"
                b += "<td class=\"nw\">\(d(f.ruleID))<br><span class=\"muted\">\(d(f.ruleTitle))</span></td>"
                b += "<td>\(d(f.status))\(f.outcome == "hit" ? "" : " (\(d(f.outcome)))")</td>"
                b += "<td class=\"wide\">\(d(f.summary))</td><td class=\"id\">\(o(f.transactionID))</td>"
                b += "<td>\(o(f.orderID))</td><td>\(o(f.userID))</td>"
                b += "<td class=\"nw\">\(o(f.caseID))<br><span class=\"muted\">\(o(f.caseStatus))</span></td></tr>\n"
            }
            b += "</tbody></table></div></section>\n"
        }

        if !result.timeline.isEmpty {
            b += "<section><h2>Timeline</h2>\n<div class=\"wrap\"><table class=\"filterable\">\n"
            b += "<thead><tr><th>UTC</th><th>storefront local time</th><th>event</th><th>what happened</th>"
            b += "<th>source</th></tr></thead>\n<tbody>\n"
            for e in result.timeline {
                b += "<tr><td class=\"nw\">\(d(e.utc))</td><td class=\"nw\">\(o(e.local))</td>"
                b += "<td class=\"nw\">\(d(e.kind.rawValue))</td><td class=\"wide\">\(d(e.description))</td>"
                b += "<td>\(d(e.source))</td></tr>\n"
            }
            b += "</tbody></table></div></section>\n"
        }

        for draft in result.consumptionDrafts {
            b += "<section><h2>Consumption information draft: \(d(draft.transactionID))</h2>\n"
            if let reason = draft.reason {
                b += "<p class=\"warn\">Not drafted: \(d(reason)).</p>\n"
            }
            if let request = draft.appleRequest {
                b += "<p class=\"warn\"><strong>DRAFT</strong>: a person must review and approve this before it is "
                b += "sent (\(d(draft.endpoint))). iapguard never sends it.</p>\n"
                b += "<pre class=\"mono\">\(d((try? LookupJSON.appleBody(request)) ?? "{}"))</pre>\n"
                b += "<ul>" + draft.basis.map { "<li>\(d($0))</li>" }.joined() + "</ul>\n"
            }
            b += "</section>\n"
        }

        if !result.notes.isEmpty {
            b +=
                "<section><h2>Notes</h2>\n<ul>" + result.notes.map { "<li>\(d($0))</li>" }.joined()
                + "</ul></section>\n"
        }
        b += "</main>\n<footer>iapguard \(d(IAPGuardInfo.version)) · lookup schema \(result.schemaVersion) · "
        b += "read-only: this lookup changed nothing in the store.</footer>\n"
        return HTMLPage.document(title: "iapguard lookup: " + result.query.id, body: b)
    }

    /// Untrusted text.
    private func d(_ text: String) -> String { HTMLText.data(text) }
    /// Untrusted optional text (empty or nil → a dash).
    private func o(_ text: String?) -> String { HTMLText.optional(text) }
}
