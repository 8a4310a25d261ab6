/// One line of `truth.jsonl`: an injected pattern (`expect: hit`), a benign look-alike (`expect: no-hit`), or
/// another record of an injected incident that the incident's one finding carries in its evidence
/// (`expect: evidence`), for one rule, with the entity keys a finding of that rule carries.
struct TruthRecord: Sendable {
    /// What was injected (`replayed-receipt`, `family-sharing`, ...).
    var pattern: String
    /// The rule id (`IAP-001` …).
    var ruleID: String
    /// `true` for `hit`, `false` for `no-hit`.
    var expectHit: Bool
    /// A record of an incident whose one finding names another record: the finding's evidence lists this
    /// one, and no finding of its own is expected (`expect: evidence`).
    var inEvidence = false
    /// `false` when the rule is tripped as a side effect of a pattern aimed at another rule.
    var primary: Bool = true
    var transactionID: String?
    var originalTransactionID: String?
    var orderID: String?
    var userID: String?
    var appAccountToken: String?
    var bundleID: String?
    var productID: String?
    var storefront: String?
    /// SHA-256 hex of the shared receipt text (receipt sharing).
    var receiptSHA256: String?
    /// For a hit: the level the finding must have (`nil`: any level).
    var level: String?
    /// For a no-hit: the highest level a finding may still have (`nil`: no finding at all).
    var maxLevel: String?
    var note: String?

    init(_ pattern: String, _ ruleID: String, hit: Bool) {
        self.pattern = pattern
        self.ruleID = ruleID
        self.expectHit = hit
    }

    /// `hit`, `no-hit` or `evidence`.
    var expectation: String { inEvidence ? "evidence" : expectHit ? "hit" : "no-hit" }

    /// The JSON line.
    var json: WorldJSON {
        .obj([
            ("pattern", .string(pattern)),
            ("rule_id", .string(ruleID)),
            ("expect", .string(expectation)),
            ("primary", .bool(primary)),
            ("transaction_id", .str(transactionID)),
            ("original_transaction_id", .str(originalTransactionID)),
            ("order_id", .str(orderID)),
            ("user_id", .str(userID)),
            ("app_account_token", .str(appAccountToken)),
            ("bundle_id", .str(bundleID)),
            ("product_id", .str(productID)),
            ("storefront", .str(storefront)),
            ("receipt_sha256", .str(receiptSHA256)),
            ("level", .str(level)),
            ("max_level", .str(maxLevel)),
            ("note", .str(note)),
        ])
    }
}
