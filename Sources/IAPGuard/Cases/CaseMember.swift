/// What the case builder knows of one active finding: the columns of the `findings` view it links and ranks
/// by (evidence is not needed to link), plus the accounts the evidence names when the caller has it.
public struct CaseMember: Sendable, Hashable {
    public var findingID: String
    public var ruleID: String
    public var level: Finding.Level
    public var amountRef: Int64?
    public var transactionID: String?
    public var originalTransactionID: String?
    public var orderID: String?
    public var userID: String?
    /// The rule's entity key (`credit_id`, `scope`/`shared_id`, `subject_kind`/`subject`, …).
    public var entityKey: [EvidenceField]
    public var summary: String
    public var firstRunID: Int64
    public var lastSeenRunID: Int64
    /// The account that lost out, when the finding's evidence names one (order or token owner).
    public var losingUserID: String?

    public init(
        findingID: String, ruleID: String, level: Finding.Level, amountRef: Int64?, transactionID: String?,
        originalTransactionID: String?, orderID: String?, userID: String?, entityKey: [EvidenceField],
        summary: String, firstRunID: Int64, lastSeenRunID: Int64, losingUserID: String? = nil
    ) {
        self.findingID = findingID
        self.ruleID = ruleID
        self.level = level
        self.amountRef = amountRef
        self.transactionID = transactionID
        self.originalTransactionID = originalTransactionID
        self.orderID = orderID
        self.userID = userID
        self.entityKey = entityKey
        self.summary = summary
        self.firstRunID = firstRunID
        self.lastSeenRunID = lastSeenRunID
        self.losingUserID = losingUserID
    }

    /// A finding about an account as a whole (storefront hopping, refund abuse): no transaction, no order.
    public var isUserLevel: Bool { transactionID == nil && orderID == nil && userID != nil }

    /// The records this finding links through (see ``CaseLinker``).
    ///
    /// Records: its transaction, original transaction, order, the credit, app account token or Apple Account
    /// (`app_transaction_id`) its rule is keyed by. Accounts link only in two narrow ways, so that one account's unrelated incidents stay
    /// apart: findings about an account as a whole link to each other (`u:`), and findings of the same rule
    /// on the same account link (`q:` — a pattern repeated by one account, such as several arbitrage
    /// purchases, is one incident).
    public var linkKeys: [String] {
        var keys: [String] = []
        if let id = transactionID, !id.isEmpty { keys.append("t:" + id) }
        if let id = originalTransactionID, !id.isEmpty { keys.append("o:" + id) }
        if let id = orderID, !id.isEmpty { keys.append("r:" + id) }
        var fields: [String: String] = [:]
        for field in entityKey { if let value = field.value, !value.isEmpty { fields[field.name] = value } }
        if let credit = fields["credit_id"] { keys.append("c:" + credit) }
        if let token = fields["app_account_token"] { keys.append("k:" + token.lowercased()) }
        // One Apple Account credited to several accounts is one incident.
        if let account = fields["app_transaction_id"] { keys.append("a:" + account) }
        for (kindName, valueName) in [("scope", "shared_id"), ("subject_kind", "subject")] {
            guard let kind = fields[kindName], let value = fields[valueName] else { continue }
            switch kind {
            case "app_account_token", "token": keys.append("k:" + value.lowercased())
            case "original_transaction_id": keys.append("o:" + value)
            case "transaction_id": keys.append("t:" + value)
            case "user", "user_id": keys.append("u:" + value)
            default: break
            }
        }
        if let user = userID, !user.isEmpty {
            if isUserLevel { keys.append("u:" + user) }
            keys.append("q:" + ruleID + "\u{1F}" + user)
        }
        return keys
    }
}
