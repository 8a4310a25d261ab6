/// The kinds of keys an incremental evaluation scopes by: the ids rules relate purchases, orders, credits
/// and accounts by. The dirty scope (table `incremental_scope`) holds keys of these kinds.
public enum ScopeKind: String, Sendable, Hashable, CaseIterable, Codable {
    case transactionID = "transaction_id"
    case originalTransactionID = "original_transaction_id"
    case orderID = "order_id"
    case creditID = "credit_id"
    case userID = "user_id"
    /// Lower-cased, as rules compare tokens.
    case appAccountToken = "app_account_token"
    case applicationUsername = "application_username"
    case receiptKey = "receipt_key"
    /// Apple's `appTransactionId`: one Apple Account in the app.
    case appTransactionID = "app_transaction_id"

    /// The kinds whose keys many purchases share (a user's, a token's, a username's, an Apple Account's
    /// purchases). The shared scope does not go back from them to every purchase carrying them; a rule that
    /// needs it names them in `incremental.shared_keys` (see ``ScopeBuilder``).
    public static let sharedKinds: [ScopeKind] = [.userID, .appAccountToken, .applicationUsername, .appTransactionID]

    /// The shared kinds that are markers accounts hold (`shared_by: holders`).
    public static let heldKinds: Set<ScopeKind> = [.appAccountToken, .applicationUsername]
}
