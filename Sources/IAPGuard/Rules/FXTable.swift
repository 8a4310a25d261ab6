/// Daily FX rates from the `fx_rates` view (units of a currency per 1 EUR; EUR is implicitly 1.0), used to
/// express a finding's money in the reference currency: the last rate on or before the given time applies.
struct FXTable {
    private var rates: [String: [(date: Int64, perEUR: Double)]] = [:]

    init(store: any PurchaseStore) throws {
        try store.query(
            "SELECT currency, rate_date, per_eur FROM fx_rates ORDER BY currency, rate_date", parameters: [:]
        ) {
            _, v in
            guard let currency = v[0].textValue, let date = v[1].integerValue, let rate = v[2].doubleValue, rate > 0
            else {
                return
            }
            rates[currency, default: []].append((date, rate))
        }
    }

    /// Units of `currency` per EUR on or before `at`, or `nil` when no rate is known.
    func perEUR(_ currency: String, at: Int64) -> Double? {
        if currency == "EUR" { return 1.0 }
        return rates[currency]?.last(where: { $0.date <= at })?.perEUR
    }

    /// `amount` milliunits of `from` in `to`, rounded; `nil` when a rate is missing.
    func convert(_ amount: Int64, from: String, to: String, at: Int64) -> Int64? {
        if from == to { return amount }
        guard let source = perEUR(from, at: at), let target = perEUR(to, at: at) else { return nil }
        return Money.rounded(Double(amount) / source * target)
    }
}
