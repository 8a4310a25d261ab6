/// One rule hit (or inconclusive evaluation) about one entity, as stored and reported.
///
/// `findingID` is stable across runs: a hash of the rule id and the entity key, so the same problem seen
/// again is `recurring`, not new. Amounts are milliunits; `amountRef` is in the config's reference currency.
public struct Finding: Sendable, Hashable, Codable {
    /// Severity, with written meanings in `docs/rules.md`.
    public enum Level: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
        case informational, low, medium, high, critical

        public var rank: Int {
            switch self {
            case .informational: return 0
            case .low: return 1
            case .medium: return 2
            case .high: return 3
            case .critical: return 4
            }
        }

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rank < rhs.rank }
    }

    /// Where the finding stands across runs.
    public enum Status: String, Sendable, Hashable, Codable, CaseIterable {
        /// First seen in this run.
        case new
        /// Seen in an earlier run too.
        case recurring
        /// Seen before, not any more.
        case resolved
        /// Matched an exception in the rule file: kept for audit, not counted as a hit.
        case suppressed
    }

    /// Whether the rule could decide.
    public enum Outcome: String, Sendable, Hashable, Codable {
        case hit
        /// The rule could not decide (no FX rate, no app account token, ...): see `inconclusiveReason`.
        case inconclusive
    }

    /// An exception that suppressed the finding.
    public struct Suppression: Sendable, Hashable, Codable {
        public var owner: String
        public var reason: String
        /// `YYYY-MM-DD`.
        public var expires: String
        public init(owner: String, reason: String, expires: String) {
            self.owner = owner
            self.reason = reason
            self.expires = expires
        }
    }

    public var findingID: String
    public var runID: Int64
    public var ruleID: String
    public var ruleVersion: String
    public var ruleTitle: String
    public var level: Level
    public var status: Status
    public var outcome: Outcome
    public var inconclusiveReason: String?
    public var transactionID: String?
    public var originalTransactionID: String?
    public var orderID: String?
    public var userID: String?
    public var bundleID: String?
    public var productID: String?
    public var storefront: String?
    /// Money involved, milliunits of `currency`.
    public var amount: Int64?
    public var currency: String?
    /// Money at risk in the reference currency, milliunits.
    public var amountRef: Int64?
    /// The observed value that triggered the rule, as text (e.g. `3 credits`, `0.31`).
    public var observed: String?
    /// The threshold it was compared with, as text.
    public var threshold: String?
    /// One sentence for humans.
    public var summary: String
    public var evidence: [EvidenceRow]
    public var suppression: Suppression?
    /// The run that first saw this finding.
    public var firstSeenRunID: Int64
    /// The entity key: the rule's `entity_key` columns and their values (the `findingID` is their hash).
    public var entityKey: [EvidenceField] = []

    public init(
        findingID: String, runID: Int64, ruleID: String, ruleVersion: String, ruleTitle: String, level: Level,
        status: Status, outcome: Outcome, summary: String, firstSeenRunID: Int64
    ) {
        self.findingID = findingID
        self.runID = runID
        self.ruleID = ruleID
        self.ruleVersion = ruleVersion
        self.ruleTitle = ruleTitle
        self.level = level
        self.status = status
        self.outcome = outcome
        self.summary = summary
        self.evidence = []
        self.firstSeenRunID = firstSeenRunID
    }
}

/// A row of evidence behind a finding: one transaction, order, credit, refund, ... as named fields.
public struct EvidenceRow: Sendable, Hashable, Codable {
    /// `transaction`, `sighting`, `order`, `credit`, `refund`, `notification`, `user`, ...
    public var kind: String
    /// Field name/value pairs in display order; values are text as stored (times epoch ms).
    public var fields: [EvidenceField]

    public init(kind: String, fields: [EvidenceField]) {
        self.kind = kind
        self.fields = fields
    }
}

/// One named value in an evidence row.
public struct EvidenceField: Sendable, Hashable, Codable {
    public var name: String
    public var value: String?
    public init(name: String, value: String?) {
        self.name = name
        self.value = value
    }
}
