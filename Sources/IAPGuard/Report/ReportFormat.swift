/// Text formats shared by the HTML, CSV and JSON outputs (documented in `docs/reports.md`).
public enum ReportFormat {
    /// Milliunits as a plain decimal: no grouping, `.` separator, at least two fraction digits, trailing
    /// zeros after the second dropped: `990` → `0.99`, `1000` → `1.00`, `1234` → `1.234`, `-1500` → `-1.50`.
    /// The reports' name for ``Money/decimalText(milliunits:)``.
    public static func decimal(milliunits: Int64) -> String {
        Money.decimalText(milliunits: milliunits)
    }

    /// Milliunits rounded half away from zero to two decimals, for people: `481613` → `481.61`.
    /// (The CSVs and `summary.json` keep the exact ``decimal(milliunits:)`` text.)
    public static func money(milliunits: Int64) -> String {
        let negative = milliunits < 0
        let cents = (milliunits.magnitude + 5) / 10
        let fraction = cents % 100
        return (negative && cents > 0 ? "-" : "") + String(cents / 100) + "." + (fraction < 10 ? "0" : "")
            + String(fraction)
    }

    /// Epoch milliseconds as ISO-8601 UTC with milliseconds: `2026-01-01T00:00:00.000Z`.
    public static func isoTime(millis: Int64) -> String {
        let (secondsTotal, ms) = floorDivide(millis, 1000)
        let (days, secondOfDay) = floorDivide(secondsTotal, 86_400)
        let (year, month, day) = CivilDate.date(days: days)
        let hour = secondOfDay / 3600
        let minute = (secondOfDay % 3600) / 60
        let second = secondOfDay % 60
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(hour, 2) + ":" + pad(minute, 2)
            + ":" + pad(second, 2) + "." + pad(ms, 3) + "Z"
    }

    /// Epoch milliseconds as a short UTC time for people: `2026-01-01 00:00 UTC`.
    public static func shortTime(millis: Int64) -> String {
        let iso = isoTime(millis: millis)
        return String(iso.prefix(10)) + " " + String(iso.dropFirst(11).prefix(5)) + " UTC"
    }

    /// Epoch milliseconds for people, to the second: `2026-01-01 00:00:05 UTC`.
    public static func humanTime(millis: Int64) -> String {
        let iso = isoTime(millis: millis)
        return String(iso.prefix(10)) + " " + String(iso.dropFirst(11).prefix(8)) + " UTC"
    }

    /// Whether an evidence field holds a time: its name ends in `_at`, `_date`, `date`, `Date`, `_ms` or starts
    /// with `expires`, and its value is an integer epoch-ms between 2000-01-01 and 2100-01-01. Such values are
    /// shown and exported as ISO-8601 UTC.
    public static func evidenceTime(name: String, value: String) -> Int64? {
        let lower = name.lowercased()
        let timeLike =
            lower.hasSuffix("_at") || lower.hasSuffix("date") || lower.hasSuffix("_ms")
            || lower.hasPrefix("expires")
        guard timeLike, !value.isEmpty, value.count <= 14, value.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
            let millis = Int64(value), millis >= 946_684_800_000, millis < 4_102_444_800_000
        else { return nil }
        return millis
    }

    /// An evidence value as exported: times converted to ISO-8601, everything else as stored.
    static func evidenceValue(name: String, value: String?) -> String? {
        guard let value else { return nil }
        if let millis = evidenceTime(name: name, value: value) { return isoTime(millis: millis) }
        if isMoneyField(name), let milli = Int64(value) { return decimal(milliunits: milli) }
        return value
    }

    /// Evidence fields that hold milliunits by the store's convention (`price`, `amount`, `amount_ref`,
    /// `ref_price`, `*_price`): written as amounts, as findings' amounts are, so a spreadsheet does not read
    /// `9990` (9.99) as nine thousand.
    static func isMoneyField(_ name: String) -> Bool {
        name == "price" || name == "amount" || name == "amount_ref" || name.hasSuffix("_price")
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        var q = a / b
        var r = a % b
        if r < 0 {
            q -= 1
            r += b
        }
        return (q, r)
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        var text = String(value.magnitude)
        while text.count < width { text = "0" + text }
        return (value < 0 ? "-" : "") + text
    }
}
