/// Where a case stands in the analyst's triage.
///
/// `open` and `investigating` are the queue; `confirmed-fraud` and `false-positive` are an analyst's decision
/// and stay while the same findings recur; `resolved` is set by the job when every finding of the case has
/// resolved (or by an analyst). A decided or resolved case re-opens when a finding it did not have joins it.
public enum CaseStatus: String, Sendable, Hashable, Codable, CaseIterable {
    case open
    case investigating
    case confirmedFraud = "confirmed-fraud"
    case falsePositive = "false-positive"
    case resolved

    /// Whether the case waits for an analyst (`open` or `investigating`).
    public var isOpen: Bool { self == .open || self == .investigating }

    /// Queue order of the states: the ones waiting for work first.
    var queueRank: Int {
        switch self {
        case .open: return 0
        case .investigating: return 1
        case .confirmedFraud: return 2
        case .falsePositive: return 3
        case .resolved: return 4
        }
    }
}
