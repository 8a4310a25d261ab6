import IAPGuard

/// Calendar arithmetic for the generator, done by hand on epoch milliseconds (UTC) so the output does
/// not depend on Foundation's calendar or locale.
enum WorldTime {
    static let second: Int64 = 1000
    static let minute: Int64 = 60_000
    static let hour: Int64 = 3_600_000
    static let day: Int64 = 86_400_000

    /// Days since 1970-01-01 for a civil date.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        CivilDate.days(year: Int64(year), month: Int64(month), day: Int64(day))
    }

    /// The civil date of a day number.
    static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let date = CivilDate.date(days: days)
        return (Int(date.year), Int(date.month), Int(date.day))
    }

    /// Parses `YYYY-MM-DD` to epoch ms at 00:00 UTC.
    static func parseDate(_ text: String) -> Int64? {
        let parts = text.split(separator: "-")
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
            (1...12).contains(m), (1...31).contains(d)
        else { return nil }
        let days = daysFromCivil(year: y, month: m, day: d)
        let back = civil(fromDays: days)
        guard back.year == y, back.month == m, back.day == d else { return nil }
        return days * day
    }

    /// The day number (days since epoch) of an instant.
    static func dayNumber(_ ms: Int64) -> Int64 { ms >= 0 ? ms / day : (ms - day + 1) / day }

    /// `YYYY-MM-DD` of a day number.
    static func dateString(day n: Int64) -> String {
        let c = civil(fromDays: n)
        return pad(c.year, 4) + "-" + pad(c.month, 2) + "-" + pad(c.day, 2)
    }

    /// 0 = Monday ... 6 = Sunday.
    static func weekday(day n: Int64) -> Int {
        // 1970-01-01 was a Thursday (3).
        Int(((n % 7) + 7 + 3) % 7)
    }

    /// Apple's legacy receipt date text: `2026-01-01 00:00:00 Etc/GMT`.
    static func appleGMT(_ ms: Int64) -> String {
        let n = dayNumber(ms)
        let rest = (ms - n * day) / 1000
        return dateString(day: n) + " " + pad(Int(rest / 3600), 2) + ":" + pad(Int(rest % 3600 / 60), 2) + ":"
            + pad(Int(rest % 60), 2) + " Etc/GMT"
    }

    /// Zero-padded decimal.
    static func pad(_ value: Int, _ width: Int) -> String {
        let s = String(value)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
