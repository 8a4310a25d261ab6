/// One copy of an Apple transaction submitted with a backend order (the receipt or signed transaction's
/// wrapper named the order: the sighting's `submitted_order_id`), as the credit link reads it.
///
/// An order that names no transaction is paid by what the client submitted for it. A legacy receipt carries
/// every transaction the device has not finished (older purchases of the same product ride along), so the
/// transaction is picked only when one stands out: the copies Apple's data confirms (not failed) before failed
/// ones, of the order's product before others, and among several, those purchased no earlier than the order
/// was created (a payment follows its order); when more than one transaction is left, none is picked.
struct SubmittedOrderCopy: Sendable, Equatable {
    var transactionID: String
    var productID: String?
    /// The copy failed verification (a forgery, another app's or a Sandbox purchase).
    var failed: Bool
    var purchaseDate: Int64?

    /// How long before its order a purchase may be dated and still be the order's (clocks differ).
    static let clockSkewMillis: Int64 = 10 * 60 * 1000

    /// The one transaction `copies` (submitted with an order for `product`, created at `createdAt`) stand
    /// for, or `nil` when none or several do.
    static func transaction(of copies: [SubmittedOrderCopy], product: String?, createdAt: Int64?) -> String? {
        let tiers: [[SubmittedOrderCopy]] = [false, true].flatMap { failed in
            let kept = copies.filter { $0.failed == failed }
            return product.map { product in [kept.filter { $0.productID == product }, kept] } ?? [kept]
        }
        for tier in tiers where !tier.isEmpty {
            let ids = Set(tier.map(\.transactionID))
            if ids.count == 1 { return ids.first }
            guard let createdAt else { return nil }
            let after = Set(
                tier.filter { ($0.purchaseDate ?? .min) >= createdAt - clockSkewMillis }.map(\.transactionID))
            return after.count == 1 ? after.first : nil
        }
        return nil
    }
}
