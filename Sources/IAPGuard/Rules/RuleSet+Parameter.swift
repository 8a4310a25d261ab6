extension RuleSet {
    /// The value rule `ruleID` binds to parameter `name` in a run: the config's `rule_params` override when
    /// there is one, else the default in the rule's file; `nil` when the rule is not in `rules` or has no
    /// such parameter. For the commands that judge the way a rule does (the lookup's missing-credit grace).
    public static func parameter(
        _ name: String, ofRule ruleID: String, in rules: [Rule], overrides: [String: [String: SQLValue]]
    ) -> SQLValue? {
        guard let rule = rules.first(where: { $0.id == ruleID }) else { return nil }
        let declared = rule.params.contains { $0.name == name }
        if let value = overrides[ruleID]?[name], declared { return value }
        return rule.params.first { $0.name == name }?.defaultValue
    }
}
