/// How a backend credits one app's subscription renewals: of the app's renewals past the grace period (later
/// transactions of an auto-renewable subscription, Family Sharing copies left out), how many any credit refers
/// to. A backend that credits each subscription once and keeps it by its expiry credits almost none of them;
/// IAP-014 then checks only the first purchase, and the lookup says the same.
struct RenewalCrediting: Sendable, Hashable {
    var renewals: Int64
    var credited: Int64

    /// Whether the backend credits a subscription once rather than each period: fewer than `share` of the
    /// renewals are credited (IAP-014's `credited < :renewal_credit_share * renewals`).
    func creditsOnce(share: Double) -> Bool {
        renewals > 0 && Double(credited) < share * Double(renewals)
    }
}
