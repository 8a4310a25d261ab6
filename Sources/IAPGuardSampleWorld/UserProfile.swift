import IAPGuard

/// A world account: its home storefront, app account token and client style.
struct UserProfile: Sendable {
    let index: Int
    let id: String
    var home: WorldCatalog.Storefront
    let token: String
    /// StoreKit 2 clients send signed transactions; the others send legacy receipts.
    var storeKit2: Bool
    let applicationUsername: String

    /// The profile of account `index` (regular users and helper accounts alike); depends only on the seed
    /// and the index.
    static func make(index: Int, seed: UInt64) -> UserProfile {
        var r = WorldRandom(seed: seed, stream: 1, index: UInt64(index))
        let home = r.weighted(WorldCatalog.storefronts.map { ($0, $0.weight) })
        let token = r.uuid()
        let storeKit2 = r.chance(1.0 / 3.0)
        let id = "u-" + WorldTime.pad(index, 6)
        return UserProfile(
            index: index, id: id, home: home, token: token, storeKit2: storeKit2,
            applicationUsername: String(Hashing.sha256Hex("account:" + id).prefix(32)))
    }
}
