/// The order statuses that say an order was never paid, as IAP-022 reads its `unpaid_statuses` parameter: a
/// comma-separated list, lower-cased with its spaces removed, that the order's status (trimmed, lower case)
/// must equal an entry of. The lookup uses the value the run binds (the config's `rule_params`, else the rule
/// file's default), so that its headline agrees with the rule.
public struct UnpaidOrderStatuses: Sendable, Equatable {
    /// The statuses, lower-cased and without spaces; empty entries dropped.
    public let statuses: Set<String>

    /// IAP-022's default `unpaid_statuses`, for a lookup that finds no rule file to read it from.
    public static let ruleDefault = UnpaidOrderStatuses(
        parameter: "failed,cancelled,canceled,declined,rejected,abandoned,voided,void,unpaid,payment_failed")

    /// Parses the parameter's comma-separated value.
    public init(parameter: String) {
        var statuses: Set<String> = []
        // As the rule's `REPLACE(LOWER(:unpaid_statuses), ' ', '')`: every space goes, not only the ends.
        for part in parameter.lowercased().split(separator: ",") {
            let status = part.filter { $0 != " " }
            if !status.isEmpty { statuses.insert(status) }
        }
        self.statuses = statuses
    }

    /// Whether `orderStatus` (trimmed, any case) is one of the statuses; `false` for no status.
    public func contains(orderStatus: String?) -> Bool {
        guard let status = orderStatus else { return false }
        return statuses.contains(TextTrim.whitespacesAndNewlines(status[...]).lowercased())
    }
}
