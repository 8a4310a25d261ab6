/// How many hits per bucket and evidence rows per hit `report.html` shows, so the page stays usable
/// whatever the number of findings.
///
/// The per-bucket and per-hit caps of ``ReportOptions`` apply first. When the page would still hold more
/// than ``ReportOptions/maxHTMLHits`` hits, every bucket gets the same lower cap — the largest one that keeps
/// the total within the budget (small buckets keep all their hits, big ones give way); likewise for
/// evidence rows among the hits shown. Each non-empty bucket shows at least one hit and each shown hit at
/// least one evidence row, so a page can exceed the budget only by those floors.
struct HTMLBudget: Sendable, Equatable {
    /// Hits shown per bucket (active, inconclusive, suppressed, resolved of one rule).
    var hitsPerBucket: Int
    /// Evidence rows shown per hit.
    var evidenceRowsPerHit: Int

    init(sections: [ReportModel.RuleSection], options: ReportOptions) {
        let buckets = sections.flatMap { [$0.active, $0.inconclusive, $0.suppressed, $0.resolved] }
        let sizes = buckets.map(\.count)
        hitsPerBucket = Self.fairCap(sizes, limit: options.maxHTMLRowsPerRule, budget: options.maxHTMLHits)
        let cap = hitsPerBucket
        let evidenceCounts = buckets.flatMap { $0.prefix(cap).map(\.evidence.count) }
        evidenceRowsPerHit = Self.fairCap(
            evidenceCounts, limit: options.maxHTMLEvidenceRowsPerHit, budget: options.maxHTMLEvidenceRows)
    }

    /// The largest cap in `1...limit` with `Σ min(size, cap) ≤ budget` (1 if even that is over budget).
    static func fairCap(_ sizes: [Int], limit: Int, budget: Int) -> Int {
        func total(_ cap: Int) -> Int { sizes.reduce(0) { $0 + min($1, cap) } }
        guard total(limit) > budget else { return limit }
        var low = 1
        var high = limit
        while low < high {
            let middle = (low + high + 1) / 2
            if total(middle) <= budget { low = middle } else { high = middle - 1 }
        }
        return low
    }
}
