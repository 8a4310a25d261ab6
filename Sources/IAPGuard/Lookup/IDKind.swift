/// The kinds of id a support lookup understands. `iapguard lookup --kind KIND ID` pins one; without it every
/// kind is tried and the answer says which matched.
public enum IDKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// Apple's `transactionId`.
    case transaction
    /// Apple's `originalTransactionId` (a subscription's renewals, restores and family-shared copies share it).
    case original
    /// The app backend's order id, or one of its credit ids (a credit resolves to its transaction and order).
    case order
    /// Apple's order id from the customer's receipt e-mail (needs the App Store Server API's Look Up Order ID).
    case appleOrder = "apple-order"
    /// The app backend's user (account) id.
    case user
    /// The `appAccountToken` (UUID) the app attached to a StoreKit 2 payment.
    case token
    /// Apple's `appTransactionId`: one per Apple Account per app (each family member has their own); looks
    /// up every transaction of that Apple Account.
    case appTransaction = "app-transaction-id"

    /// A short human name.
    public var label: String {
        switch self {
        case .transaction: return "transaction ID"
        case .original: return "original transaction ID"
        case .order: return "order or credit ID"
        case .appleOrder: return "Apple order ID"
        case .user: return "user ID"
        case .token: return "app account token"
        case .appTransaction: return "app transaction ID (Apple Account)"
        }
    }

    /// The order in which kinds are tried and reported (the first match is the main subject).
    static let priority: [IDKind] = [.transaction, .order, .original, .appleOrder, .token, .appTransaction, .user]
}
