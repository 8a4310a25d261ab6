import Foundation

/// The generator's exchange rates: a synthetic, ECB-style table (`date,currency,per_eur`, weekdays only,
/// EUR base) computed by a fixed formula, so the shipped sample snapshot (`rules/fx-rates.csv`) and every
/// generated world agree on every day they share. The values are plausible, not real ECB data.
public enum SyntheticFXRates {
    struct Series: Sendable {
        let currency: String
        /// Units per EUR on the anchor day.
        let base: Double
        /// Relative drift per day (devaluing currencies drift up).
        let trendPerDay: Double
        let phase: Double
    }

    static let series: [Series] = [
        Series(currency: "USD", base: 1.1650, trendPerDay: 0.00002, phase: 0.3),
        Series(currency: "GBP", base: 0.8680, trendPerDay: 0.00001, phase: 1.1),
        Series(currency: "JPY", base: 171.80, trendPerDay: 0.00004, phase: 2.0),
        Series(currency: "TRY", base: 48.50, trendPerDay: 0.0006, phase: 0.7),
        Series(currency: "INR", base: 102.30, trendPerDay: 0.00008, phase: 1.9),
        Series(currency: "BRL", base: 6.3200, trendPerDay: 0.00005, phase: 2.6),
        Series(currency: "EGP", base: 56.40, trendPerDay: 0.0002, phase: 0.2),
        Series(currency: "ARS", base: 1650.0, trendPerDay: 0.0012, phase: 1.4),
        Series(currency: "NGN", base: 1785.0, trendPerDay: 0.0004, phase: 2.9),
    ]

    /// The anchor day of the formula: 2026-08-01.
    static let anchorDay = WorldTime.daysFromCivil(year: 2026, month: 8, day: 1)

    /// The rate row text for a currency on a weekday, or `nil` on weekends / unknown currencies.
    static func rateText(_ currency: String, day: Int64) -> String? {
        guard WorldTime.weekday(day: day) < 5,
            let index = series.firstIndex(where: { $0.currency == currency })
        else { return nil }
        let s = series[index]
        let t = Double(day - anchorDay)
        var jitterState = UInt64(bitPattern: day) &* 31 &+ UInt64(index) &* 0x5851_F42D_4C95_7F2D
        let jitter = Double(WorldRandom.splitMix(&jitterState) >> 11) * 0x1.0p-53 * 2 - 1
        let wave = 0.004 * sin(2 * Double.pi * t / 23 + s.phase) + 0.002 * sin(2 * Double.pi * t / 7.3 + s.phase * 2)
        let value = s.base * exp(s.trendPerDay * t) * (1 + wave + 0.0012 * jitter)
        return format(value)
    }

    /// Four decimals below 100, two above (ECB style).
    static func format(_ value: Double) -> String {
        let digits = value < 100 ? 4 : 2
        let scale = digits == 4 ? 10_000.0 : 100.0
        let scaled = Int64((value * scale).rounded())
        let whole = scaled / Int64(scale)
        let frac = scaled % Int64(scale)
        return String(whole) + "." + WorldTime.pad(Int(frac), digits)
    }

    /// Units of `currency` per EUR in force on `day` (the last weekday on or before it). EUR is 1.
    static func perEUR(_ currency: String, day: Int64) -> Double? {
        if currency == "EUR" { return 1 }
        var d = day
        for _ in 0..<7 {
            if let text = rateText(currency, day: d) { return Double(text) }
            d -= 1
        }
        return nil
    }

    /// Converts `milli` of `currency` into `target` milliunits at the rates of `day`.
    static func convert(milli: Int64, from currency: String, to target: String, day: Int64) -> Double? {
        guard let from = perEUR(currency, day: day), let to = perEUR(target, day: day) else { return nil }
        return Double(milli) / from * to
    }

    /// The CSV (header plus one row per weekday and currency) for days `first...last` (day numbers).
    public static func csv(firstDay: Int64, lastDay: Int64) -> String {
        var out = "date,currency,per_eur\n"
        guard firstDay <= lastDay else { return out }
        for day in firstDay...lastDay {
            for s in series {
                if let text = rateText(s.currency, day: day) {
                    out += WorldTime.dateString(day: day) + "," + s.currency + "," + text + "\n"
                }
            }
        }
        return out
    }

    /// The shipped sample snapshot: 2026-08-01 … 2026-11-30.
    public static var sampleSnapshotCSV: String {
        csv(
            firstDay: WorldTime.daysFromCivil(year: 2026, month: 8, day: 1),
            lastDay: WorldTime.daysFromCivil(year: 2026, month: 11, day: 30))
    }
}
