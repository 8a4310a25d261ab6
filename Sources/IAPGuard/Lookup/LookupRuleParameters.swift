/// The rule parameters a lookup judges with, as a run binds them (the config's `rule_params`, else the rule
/// files' defaults), so that the lookup's verdicts agree with the rules: IAP-014's `grace_hours`,
/// `renewal_credit_share` and `clock_skew_minutes` (when a missing credit is owed) and IAP-022's
/// `unpaid_statuses` (a credited order that was never paid). A value no rule gives is `nil`, and the lookup
/// keeps its own default.
public struct LookupRuleParameters: Sendable, Equatable {
    public var graceHours: Int64?
    public var renewalCreditShare: Double?
    public var clockSkewMinutes: Int64?
    public var unpaidStatuses: UnpaidOrderStatuses?

    /// Reads the parameters from `rules` with the config's `overrides` applied.
    public init(rules: [Rule], overrides: [String: [String: SQLValue]]) {
        func value(_ name: String, of rule: String) -> SQLValue? {
            RuleSet.parameter(name, ofRule: rule, in: rules, overrides: overrides)
        }
        graceHours = value("grace_hours", of: "IAP-014")?.integerValue
        renewalCreditShare = value("renewal_credit_share", of: "IAP-014")?.doubleValue
        clockSkewMinutes = value("clock_skew_minutes", of: "IAP-014")?.integerValue
        unpaidStatuses = value("unpaid_statuses", of: "IAP-022")?.textValue.map { UnpaidOrderStatuses(parameter: $0) }
    }

    /// Sets the parameters that have a value on `service`.
    public func apply(to service: inout LookupService) {
        if let graceHours { service.graceHours = graceHours }
        if let renewalCreditShare { service.renewalCreditShare = renewalCreditShare }
        if let clockSkewMinutes { service.clockSkewMinutes = clockSkewMinutes }
        if let unpaidStatuses { service.unpaidOrderStatuses = unpaidStatuses }
    }
}
