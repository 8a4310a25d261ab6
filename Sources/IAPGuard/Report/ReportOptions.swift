import Foundation

/// How a report is written.
public struct ReportOptions: Sendable, Hashable {
    /// At most this many hits per rule (and per bucket: active, inconclusive, suppressed, resolved) are
    /// shown in the HTML; the rest are counted and left to `findings.csv`, which always has them all.
    public var maxHTMLRowsPerRule: Int
    /// At most this many evidence rows per hit in the HTML (all are in `evidence.csv`).
    public var maxHTMLEvidenceRowsPerHit: Int
    /// At most about this many hits on the whole page: when the buckets hold more, every bucket's cap is
    /// lowered to the same fair share (see ``HTMLBudget``), so a run with 100,000 findings still opens in a
    /// browser. The CSVs always have everything.
    public var maxHTMLHits: Int
    /// At most about this many evidence rows on the whole page, shared the same way among the hits shown.
    public var maxHTMLEvidenceRows: Int
    /// Longest value shown in an HTML table cell, in characters; longer ones end in `…` (CSV has them whole).
    public var maxHTMLCellCharacters: Int
    /// How many runs (this one included) the trend charts show.
    public var trendRuns: Int
    /// When set, user ids are replaced everywhere (HTML, CSV, JSON) by `anon-` + the first 16 hex digits of
    /// HMAC-SHA256(key, user id), for reports that leave the risk team. Keep the key secret and stable.
    public var pseudonymizeUserIDs: Data?

    public init(
        maxHTMLRowsPerRule: Int = 200, maxHTMLEvidenceRowsPerHit: Int = 50, maxHTMLCellCharacters: Int = 200,
        trendRuns: Int = 20, pseudonymizeUserIDs: Data? = nil, maxHTMLHits: Int = 4_000,
        maxHTMLEvidenceRows: Int = 20_000
    ) {
        self.maxHTMLRowsPerRule = max(1, maxHTMLRowsPerRule)
        self.maxHTMLEvidenceRowsPerHit = max(1, maxHTMLEvidenceRowsPerHit)
        self.maxHTMLHits = max(1, maxHTMLHits)
        self.maxHTMLEvidenceRows = max(1, maxHTMLEvidenceRows)
        self.maxHTMLCellCharacters = max(16, maxHTMLCellCharacters)
        self.trendRuns = max(2, trendRuns)
        self.pseudonymizeUserIDs = pseudonymizeUserIDs
    }
}
