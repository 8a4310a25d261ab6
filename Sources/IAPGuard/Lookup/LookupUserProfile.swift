/// What the store knows about one account: purchases, spend in the reference currency, refunds,
/// storefronts. Built for user lookups and for consumption drafts.
public struct LookupUserProfile: Sendable, Hashable, Codable {
    public var userID: String
    /// Real-money purchases (Production, verified or legacy not-signed, not family-shared) tied to the user.
    public var purchaseCount: Int
    /// Their total in the reference currency, milliunits (purchases with no FX rate are left out and counted).
    public var spendRef: Int64
    public var referenceCurrency: String
    /// Purchases whose price could not be converted (no FX rate, or no price).
    public var unconvertedPurchases: Int
    /// Purchases refunded or revoked by Apple (and not reversed).
    public var refundCount: Int
    /// The refunded share of their price, in the reference currency, milliunits.
    public var refundedRef: Int64
    public var sandboxPurchases: Int
    /// Storefronts (ISO 3166-1 alpha-3) of the user's transactions and orders, sorted.
    public var storefronts: [String]
    /// Countries the backend recorded for the user's orders, sorted.
    public var countries: [String]
    /// Credits standing now, and reversed ones.
    public var standingCredits: Int
    public var reversedCredits: Int
    public var orders: Int
    /// Whether the user is on the tester allow-list.
    public var tester: Bool
    /// Earliest and latest activity seen in the store (orders, credits, submissions, purchases), epoch ms.
    public var firstSeen: Int64?
    public var lastSeen: Int64?
    /// The account's record in the accounts source (`users`), when it has one.
    public var account: AccountRecord?

    /// An account's record in the accounts source (`users` view).
    public struct AccountRecord: Sendable, Hashable, Codable {
        /// ISO 3166-1 alpha-3 home country.
        public var country: String?
        /// The app account token the app gives the account, lower-cased.
        public var appAccountToken: String?
        /// The legacy `applicationUsername` the app attaches for the account.
        public var applicationUsername: String?
        /// When the account was created, epoch ms.
        public var createdAt: Int64?
        /// The source name and `file:line` of the record.
        public var source: String
    }
}
