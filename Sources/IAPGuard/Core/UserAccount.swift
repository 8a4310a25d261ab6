/// One account of the app's backend (`kind: users` sources): the account's home country and the account
/// markers the app attaches to payments. Where present, it is where rules take a token's owner and a
/// user's home country from (orders are the fallback).
public struct UserAccount: Sendable, Hashable, Codable {
    public var userID: String
    /// ISO 3166-1 alpha-3 home country (billing or profile country).
    public var country: String?
    /// The `appAccountToken` the app assigns this account (StoreKit 2), lower-cased.
    public var appAccountToken: String?
    /// The legacy `applicationUsername` the app attaches for this account (StoreKit 1).
    public var applicationUsername: String?
    public var createdAt: Int64?

    public init(userID: String) { self.userID = userID }
}
