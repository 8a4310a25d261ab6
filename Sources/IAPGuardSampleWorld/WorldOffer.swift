import IAPGuard

/// A subscription offer some ordinary subscribers start on, so the demo world carries Apple's offer fields
/// (`offerType`, `offerIdentifier`, `offerDiscountType`, `offerPeriod`). The offer sets what the first period
/// costs; the order shows the same price, or for one buyer in three the price the product renews at (a paywall
/// that logs "then 9.99"), and neither is a displayed-price mismatch. Chosen from the user's index (no draw
/// from the world's random stream), so every other record of the world is unchanged.
struct WorldOffer: Sendable {
    var type: Int64
    var identifier: String?
    var discountType: String
    /// The offer's ISO 8601 duration; `nil`: one billing period of the product.
    var period: String?
    /// The share of the product's local price paid in the offer period (0: free).
    var priceShare: Int64

    /// A one-week free trial (introductory offer).
    static let freeTrial = WorldOffer(
        type: 1, identifier: nil, discountType: "FREE_TRIAL", period: "P1W", priceShare: 0)
    /// An offer code: the first billing period at half price.
    static let offerCode = WorldOffer(
        type: 3, identifier: "SPRING-HALF", discountType: "PAY_AS_YOU_GO", period: nil, priceShare: 50)

    /// The offer an ordinary subscriber with `userIndex` starts on, if any (about half of them).
    static func forSubscriber(userIndex: Int) -> WorldOffer? {
        switch userIndex % 4 {
        case 0: return .freeTrial
        case 1: return .offerCode
        default: return nil
        }
    }

    /// `t`, a purchase of a product billed every `periodDays`, bought on this offer: its offer fields set and
    /// its price the offer's (whole cents).
    func apply(to t: inout AppleTransaction, periodDays: Int) {
        t.offerType = type
        t.offerIdentifier = identifier
        t.offerDiscountType = discountType
        t.offerPeriod = period ?? Self.isoPeriod(days: periodDays)
        t.price = t.price.map { $0 * priceShare / 100 / 10 * 10 }
    }

    static func isoPeriod(days: Int) -> String {
        switch days {
        case 7: return "P1W"
        case 28...31: return "P1M"
        case 365, 366: return "P1Y"
        default: return "P\(days)D"
        }
    }
}
