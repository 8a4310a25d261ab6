/// The sample world's apps, products, storefronts and price points.
///
/// Three configured apps (`com.example.coins`, `com.example.coins.plus`, and `com.example.coins.pro`, whose
/// backend credits a subscription once, not each renewal) and one cheap sister app (`com.example.cheapapp`)
/// that the config does not list. Local prices follow Apple-style price points
/// per storefront; some storefronts (TUR, EGY, ARG, NGA) are far cheaper than the reference price once
/// converted, which is what currency arbitrage exploits.
enum WorldCatalog {
    /// An app.
    struct App: Sendable {
        let bundleID: String
        let appAppleID: Int64
        /// Listed in the generated config.
        let configured: Bool
    }

    /// A product of an app.
    struct Product: Sendable {
        let productID: String
        let bundleID: String
        /// Apple's spelling of the product type.
        let type: String
        /// Units granted per purchase (coins, days, 1 for an unlock).
        let units: Int64
        /// Index into ``usdTiers`` (the reference price point).
        let tier: Int
        /// Subscription period in days, 0 for anything else.
        let periodDays: Int
        /// Listed in the generated config's catalog.
        let inConfig: Bool

        var isSubscription: Bool { periodDays > 0 }
        var isConsumable: Bool { type == "Consumable" }
        /// Reference price in USD milliunits.
        var referencePriceMilli: Int64 { WorldCatalog.usdTiers[tier] }
    }

    /// A storefront with its currency and local price points (milliunits, one per tier).
    struct Storefront: Sendable {
        let code: String
        let storefrontID: String
        let currency: String
        /// Decimal places of the currency as displayed.
        let minorDigits: Int
        let tierPrices: [Int64]
        /// Share of users whose home it is.
        let weight: Int
    }

    static let coinsApp = App(bundleID: "com.example.coins", appAppleID: 1_234_567, configured: true)
    static let plusApp = App(bundleID: "com.example.coins.plus", appAppleID: 1_234_568, configured: true)
    static let cheapApp = App(bundleID: "com.example.cheapapp", appAppleID: 7_654_321, configured: false)
    /// An app whose backend credits a subscription once, at its first purchase, and keeps it by its expiry:
    /// its renewals have no credit of their own.
    static let proApp = App(bundleID: "com.example.coins.pro", appAppleID: 1_234_569, configured: true)
    static let apps = [coinsApp, plusApp, cheapApp, proApp]

    /// Reference price points in USD milliunits.
    static let usdTiers: [Int64] = [990, 2990, 4990, 9990, 19990, 49990, 79990]

    static let pack100 = Product(
        productID: "com.example.coins.pack100", bundleID: coinsApp.bundleID, type: "Consumable", units: 100,
        tier: 0, periodDays: 0, inConfig: true)
    static let pack550 = Product(
        productID: "com.example.coins.pack550", bundleID: coinsApp.bundleID, type: "Consumable", units: 550,
        tier: 2, periodDays: 0, inConfig: true)
    static let pack1200 = Product(
        productID: "com.example.coins.pack1200", bundleID: coinsApp.bundleID, type: "Consumable", units: 1200,
        tier: 3, periodDays: 0, inConfig: true)
    static let pack2500 = Product(
        productID: "com.example.coins.pack2500", bundleID: coinsApp.bundleID, type: "Consumable", units: 2500,
        tier: 4, periodDays: 0, inConfig: true)
    static let pack6500 = Product(
        productID: "com.example.coins.pack6500", bundleID: coinsApp.bundleID, type: "Consumable", units: 6500,
        tier: 5, periodDays: 0, inConfig: true)
    static let noAds = Product(
        productID: "com.example.coins.noads", bundleID: coinsApp.bundleID, type: "Non-Consumable", units: 1,
        tier: 2, periodDays: 0, inConfig: true)
    static let plusWeekly = Product(
        productID: "com.example.coins.plus.weekly", bundleID: plusApp.bundleID,
        type: "Auto-Renewable Subscription", units: 7, tier: 1, periodDays: 7, inConfig: true)
    static let plusMonthly = Product(
        productID: "com.example.coins.plus.monthly", bundleID: plusApp.bundleID,
        type: "Auto-Renewable Subscription", units: 30, tier: 3, periodDays: 30, inConfig: true)
    static let plusYearly = Product(
        productID: "com.example.coins.plus.yearly", bundleID: plusApp.bundleID,
        type: "Auto-Renewable Subscription", units: 365, tier: 6, periodDays: 365, inConfig: true)
    static let proWeekly = Product(
        productID: "com.example.coins.pro.weekly", bundleID: proApp.bundleID,
        type: "Auto-Renewable Subscription", units: 7, tier: 1, periodDays: 7, inConfig: true)
    /// The sister app's cheap tip: a real, valid purchase in an app the backend does not serve.
    static let cheapTip = Product(
        productID: "com.example.cheapapp.tip", bundleID: cheapApp.bundleID, type: "Consumable", units: 1,
        tier: 0, periodDays: 0, inConfig: false)
    /// A retired bundle offer no longer in the catalog.
    static let retiredStarter = Product(
        productID: "com.example.coins.starter_bundle", bundleID: coinsApp.bundleID, type: "Consumable",
        units: 300, tier: 1, periodDays: 0, inConfig: false)

    /// Every product the config lists.
    static let configuredProducts = [
        pack100, pack550, pack1200, pack2500, pack6500, noAds, plusWeekly, plusMonthly, plusYearly, proWeekly,
    ]
    /// Consumables with their purchase weights (small packs are bought most).
    static let consumableWeights: [(Product, Int)] = [
        (pack100, 40), (pack550, 25), (pack1200, 18), (pack2500, 10), (pack6500, 4),
    ]
    /// The subscription group id shared by the plus subscriptions.
    static let subscriptionGroupID = "21482500"

    /// Storefronts (ISO 3166-1 alpha-3) with local price points in milliunits.
    static let storefronts: [Storefront] = [
        Storefront(
            code: "USA", storefrontID: "143441", currency: "USD", minorDigits: 2,
            tierPrices: [990, 2990, 4990, 9990, 19990, 49990, 79990], weight: 30),
        Storefront(
            code: "GBR", storefrontID: "143444", currency: "GBP", minorDigits: 2,
            tierPrices: [990, 2990, 4990, 9990, 19990, 49990, 79990], weight: 10),
        Storefront(
            code: "DEU", storefrontID: "143443", currency: "EUR", minorDigits: 2,
            tierPrices: [990, 2990, 4990, 9990, 19990, 49990, 79990], weight: 10),
        Storefront(
            code: "FRA", storefrontID: "143442", currency: "EUR", minorDigits: 2,
            tierPrices: [990, 2990, 4990, 9990, 19990, 49990, 79990], weight: 7),
        Storefront(
            code: "JPN", storefrontID: "143462", currency: "JPY", minorDigits: 0,
            tierPrices: [150_000, 450_000, 800_000, 1_500_000, 3_000_000, 7_500_000, 12_000_000], weight: 10),
        Storefront(
            code: "TUR", storefrontID: "143480", currency: "TRY", minorDigits: 2,
            tierPrices: [19990, 59990, 99990, 199_990, 399_990, 999_990, 1_599_990], weight: 7),
        Storefront(
            code: "IND", storefrontID: "143467", currency: "INR", minorDigits: 2,
            tierPrices: [49000, 149_000, 249_000, 499_000, 999_000, 2_499_000, 3_999_000], weight: 8),
        Storefront(
            code: "BRA", storefrontID: "143503", currency: "BRL", minorDigits: 2,
            tierPrices: [4900, 14900, 24900, 49900, 99900, 249_900, 399_900], weight: 8),
        Storefront(
            code: "EGY", storefrontID: "143516", currency: "EGP", minorDigits: 2,
            tierPrices: [14990, 44990, 74990, 149_990, 299_990, 749_990, 1_199_990], weight: 3),
        Storefront(
            code: "ARG", storefrontID: "143505", currency: "ARS", minorDigits: 2,
            tierPrices: [299_000, 899_000, 1_499_000, 2_999_000, 5_999_000, 14_999_000, 23_999_000], weight: 3),
        Storefront(
            code: "NGA", storefrontID: "143561", currency: "NGN", minorDigits: 2,
            tierPrices: [300_000, 900_000, 1_500_000, 3_000_000, 6_000_000, 15_000_000, 24_000_000], weight: 4),
    ]

    /// Storefronts far cheaper than the reference price once converted.
    static let cheapStorefrontCodes = ["TUR", "EGY", "ARG", "NGA"]
    /// Storefronts priced at or above the reference price.
    static let fullPriceStorefrontCodes = ["USA", "GBR", "DEU", "FRA", "JPN"]

    /// The storefront with that alpha-3 code (falls back to USA).
    static func storefront(_ code: String) -> Storefront {
        storefronts.first { $0.code == code } ?? storefronts[0]
    }

    /// The local price (milliunits) of `product` in `storefront`.
    static func localPrice(_ product: Product, in storefront: Storefront) -> Int64 {
        storefront.tierPrices[product.tier]
    }

    /// Milliunits as decimal text with the currency's decimals (`990` USD → `0.99`, `150000` JPY → `150`).
    static func decimalText(milli: Int64, minorDigits: Int) -> String {
        let negative = milli < 0
        let m = negative ? -milli : milli
        let whole = m / 1000
        var text = String(whole)
        if minorDigits > 0 {
            let fraction = m % 1000
            var frac = WorldTime.pad(Int(fraction), 3)
            // Keep at least `minorDigits`, more only if needed to stay exact.
            while frac.count > minorDigits && frac.hasSuffix("0") { frac.removeLast() }
            text += "." + frac
        } else if m % 1000 != 0 {
            var frac = WorldTime.pad(Int(m % 1000), 3)
            while frac.hasSuffix("0") { frac.removeLast() }
            text += "." + frac
        }
        return negative ? "-" + text : text
    }
}
