/// Renders a ``LookupResult`` for a terminal: plain text, at most 80 columns, the answer first. Control and
/// bidi characters from the data are shown as `⟦U+XXXX⟧` so an id cannot move the cursor or reorder text.
public struct LookupTextRenderer {
    /// The line width.
    public var width = 80
    /// Timeline events shown (the latest ones); the JSON and HTML show all.
    public var maxTimelineEvents = 40
    /// Non-problem verdicts shown one line each; problems are always shown in full.
    public var maxQuietVerdicts = 15

    public init() {}

    public func render(_ result: LookupResult) -> String {
        var out: [String] = []
        func wrap(_ text: String, indent: String = "", first: String? = nil) {
            out += Self.wrap(Self.clean(text), width: width, firstIndent: first ?? indent, indent: indent)
        }
        func heading(_ title: String) {
            out.append("")
            let lines = Self.wrap(Self.clean(title), width: width, firstIndent: "", indent: "  ")
            out += lines
            out.append(String(repeating: "-", count: min(lines.map(\.count).max() ?? 0, width)))
        }

        wrap("iapguard lookup: \(result.query.id)")
        if result.found {
            wrap(
                "Matched as: "
                    + result.query.matches.map { "\($0.kind.label) (\($0.matched))" }.joined(separator: "; "),
                indent: "  ")
        }
        var asOf = "As of \(StorefrontTime.shortUTC(result.asOf))"
        if let run = result.lastRun {
            asOf +=
                "; last run #\(run.runID) \(run.status), finished \(run.finishedAt.map(StorefrontTime.shortUTC) ?? "not finished")"
        }
        wrap(asOf, indent: "  ")

        heading(result.found ? "ANSWER" : "NOT FOUND")
        for line in result.answer { wrap(line, indent: "  ", first: "* ") }

        if result.found && !result.verdicts.isEmpty {
            heading("VERDICTS")
            let problems = result.verdicts.filter(\.problem)
            let quiet = result.verdicts.filter { !$0.problem }
            for v in problems + (problems.count + quiet.count <= 6 ? quiet : []) { verdict(v, into: &out) }
            if problems.count + quiet.count > 6 {
                for v in quiet.prefix(maxQuietVerdicts) {
                    wrap("[\(v.code.rawValue)] \(v.transactionID ?? v.orderIDs.first ?? "")", indent: "    ")
                }
                if quiet.count > maxQuietVerdicts {
                    wrap("… \(quiet.count - maxQuietVerdicts) more without problems (see --json).", indent: "    ")
                }
            }
        }

        for user in result.users {
            heading("USER \(user.userID)")
            let spend = Money.decimalText(milliunits: user.spendRef) + " " + user.referenceCurrency
            let refunded = Money.decimalText(milliunits: user.refundedRef) + " " + user.referenceCurrency
            wrap(
                "purchases \(user.purchaseCount), spent \(spend)\(user.unconvertedPurchases > 0 ? " (+\(user.unconvertedPurchases) without a price or FX rate)" : "")",
                indent: "  ")
            wrap(
                "refunds \(user.refundCount) (\(refunded)); sandbox purchases \(user.sandboxPurchases)\(user.tester ? "; on the tester list" : "")",
                indent: "  ")
            wrap(
                "orders \(user.orders); credits standing \(user.standingCredits), reversed \(user.reversedCredits)",
                indent: "  ")
            wrap(
                "storefronts \(user.storefronts.joined(separator: ", ")); countries \(user.countries.joined(separator: ", "))",
                indent: "  ")
            if let first = user.firstSeen, let last = user.lastSeen {
                wrap("active \(StorefrontTime.shortUTC(first)) to \(StorefrontTime.shortUTC(last))", indent: "  ")
            }
            if let account = user.account { wrap("account \(LookupService.describe(account))", indent: "  ") }
        }

        if !result.findings.isEmpty {
            heading("FINDINGS (\(result.findings.count))")
            for f in result.findings.prefix(30) {
                wrap(
                    "\(f.level.uppercased()) \(f.ruleID) \(f.status)\(f.outcome == "hit" ? "" : " \(f.outcome)"): \(f.summary)"
                        + (f.caseID.map { " [case \($0) \(f.caseStatus ?? "")]" } ?? ""),
                    indent: "    ", first: "  ")
            }
            if result.findings.count > 30 { wrap("… \(result.findings.count - 30) more (see --json).", indent: "  ") }
        }

        if !result.timeline.isEmpty {
            let shown = result.timeline.suffix(maxTimelineEvents)
            heading(
                "TIMELINE (UTC\(shown.count < result.timeline.count ? "; latest \(shown.count) of \(result.timeline.count)" : ""))"
            )
            for e in shown {
                let time = String(StorefrontTime.shortUTC(e.at).dropLast(4))
                wrap("\(time) \(e.description)", indent: String(repeating: " ", count: 19), first: "  ")
                let local = e.local.map { "local \($0); " } ?? ""
                wrap("\(local)\(e.source)", indent: String(repeating: " ", count: 19))
            }
        }

        for draft in result.consumptionDrafts {
            heading("CONSUMPTION DRAFT \(draft.transactionID) (\(draft.state.rawValue))")
            if let reason = draft.reason { wrap("Not drafted: \(reason).", indent: "  ") }
            if let request = draft.appleRequest {
                wrap("DRAFT - a person must approve before sending: \(draft.endpoint)", indent: "  ")
                let body = (try? LookupJSON.appleBody(request)) ?? "{}"
                for line in body.split(separator: "\n") {
                    out.append(String(("    " + Self.clean(String(line))).prefix(width)))
                }
                for b in draft.basis { wrap(b, indent: "    ", first: "  - ") }
            }
        }

        if !result.notes.isEmpty {
            heading("NOTES")
            for note in result.notes { wrap(note, indent: "  ", first: "* ") }
        }
        return out.joined(separator: "\n") + "\n"
    }

    private func verdict(_ v: ClaimVerdict, into out: inout [String]) {
        func wrap(_ text: String, indent: String, first: String? = nil) {
            out += Self.wrap(Self.clean(text), width: width, firstIndent: first ?? indent, indent: indent)
        }
        wrap("[\(v.code.rawValue.uppercased())] \(v.headline)", indent: "    ", first: "  ")
        var who: [String] = []
        if let payer = v.paidBy { who.append("paid by \(payer)") }
        who.append("credited to \(v.creditedTo.isEmpty ? "nobody" : v.creditedTo.joined(separator: ", "))")
        if !v.orderIDs.isEmpty { who.append("orders \(v.orderIDs.joined(separator: ", "))") }
        wrap(who.joined(separator: "; "), indent: "    ")
        if let lookAlike = v.lookAlike { wrap("look-alike: \(lookAlike) (benign)", indent: "    ") }
        for d in v.details { wrap(d, indent: "      ", first: "    - ") }
        for f in v.flaggedBy { wrap("FLAGGED: \(f)", indent: "      ", first: "    ") }
        if let action = v.action { wrap("ACTION: \(action)", indent: "      ", first: "    ") }
    }

    /// Replaces control, bidi and invisible format characters with a visible `⟦U+XXXX⟧` marker.
    public static func clean(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            if HTMLText.isNeutralised(scalar) || scalar == "\n" || scalar == "\t" {
                var hex = String(scalar.value, radix: 16, uppercase: true)
                while hex.count < 4 { hex = "0" + hex }
                out += "⟦U+" + hex + "⟧"
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Greedy word wrap; words longer than the line are cut.
    static func wrap(_ text: String, width: Int, firstIndent: String, indent: String) -> [String] {
        var lines: [String] = []
        var line = firstIndent
        var lineHasWord = false
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            var word = Substring(word)
            let room = width - line.count - (lineHasWord ? 1 : 0)
            if word.count <= room {
                line += (lineHasWord ? " " : "") + word
                lineHasWord = true
                continue
            }
            if lineHasWord {
                lines.append(line)
                line = indent
                lineHasWord = false
            }
            while word.count > width - line.count {
                let cut = max(width - line.count, 1)
                lines.append(line + word.prefix(cut))
                word = word.dropFirst(cut)
                line = indent
            }
            line += word
            lineHasWord = !word.isEmpty
        }
        if lineHasWord || lines.isEmpty { lines.append(line) }
        return lines
    }
}
