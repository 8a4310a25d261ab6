import Foundation

/// Parses the time forms the inputs use into epoch milliseconds UTC.
public enum TimeParser {
    /// Epoch milliseconds (all digits) or RFC 3339 (`2026-01-02T03:04:05Z`, fractional seconds and offsets
    /// allowed; an offset may also be `+HH` or `+HHMM`), or a date alone (`2026-01-02`, midnight UTC).
    /// Returns `nil` for anything else.
    public static func epochMillis(_ text: String) -> Int64? {
        let s = TextTrim.whitespaces(text)
        if s.isEmpty { return nil }
        if TextTrim.isASCIIDigits(s) { return Int64(s) }
        return rfc3339(s)
    }

    /// RFC 3339 / ISO 8601 date-time (or a plain `YYYY-MM-DD`) to epoch ms, without locale-dependent APIs.
    public static func rfc3339(_ s: String) -> Int64? {
        rfc3339(utf8: Array(s.utf8))
    }

    /// ``rfc3339(_:)`` of text given as its UTF-8 bytes.
    static func rfc3339(utf8 chars: [UInt8]) -> Int64? {
        func number(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= chars.count else { return nil }
            var value = 0
            for i in from..<(from + count) {
                let c = chars[i]
                guard c >= 48, c <= 57 else { return nil }
                value = value * 10 + Int(c - 48)
            }
            return value
        }
        guard let year = number(0, 4), chars.count >= 10, chars[4] == UInt8(ascii: "-"),
            let month = number(5, 2), chars[7] == UInt8(ascii: "-"), let day = number(8, 2),
            (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
        else { return nil }
        var hour = 0
        var minute = 0
        var second = 0
        var millis = 0
        var offsetSeconds = 0
        if chars.count > 10 {
            guard chars[10] == UInt8(ascii: "T") || chars[10] == UInt8(ascii: " ") || chars[10] == UInt8(ascii: "t"),
                let h = number(11, 2), chars.count > 13, chars[13] == UInt8(ascii: ":"), let m = number(14, 2),
                chars.count > 16, chars[16] == UInt8(ascii: ":"), let sec = number(17, 2),
                h < 24, m < 60, sec < 61
            else { return nil }
            hour = h
            minute = m
            second = sec
            var i = 19
            if i < chars.count, chars[i] == UInt8(ascii: ".") {
                i += 1
                var digits = 0
                while i < chars.count, chars[i] >= 48, chars[i] <= 57 {
                    if digits < 3 { millis = millis * 10 + Int(chars[i] - 48) }
                    digits += 1
                    i += 1
                }
                guard digits > 0 else { return nil }
                // More than three digits are cut to milliseconds above; fewer are scaled up.
                if digits < 3 {
                    for _ in digits..<3 { millis *= 10 }
                }
            }
            guard i < chars.count else { return nil }
            if chars[i] == UInt8(ascii: "Z") || chars[i] == UInt8(ascii: "z") {
                guard i + 1 == chars.count else { return nil }
            } else if chars[i] == UInt8(ascii: "+") || chars[i] == UInt8(ascii: "-") {
                // `+HH:MM` (RFC 3339), and what databases and libraries also write: `+HH` (PostgreSQL's
                // timestamptz text) and `+HHMM` (ISO 8601 basic, `%z`).
                guard let oh = number(i + 1, 2), oh < 24 else { return nil }
                var om = 0
                switch chars.count - i {
                case 3: break
                case 5:
                    guard let m = number(i + 3, 2) else { return nil }
                    om = m
                case 6:
                    guard chars[i + 3] == UInt8(ascii: ":"), let m = number(i + 4, 2) else { return nil }
                    om = m
                default: return nil
                }
                guard om < 60 else { return nil }
                offsetSeconds = (oh * 3600 + om * 60) * (chars[i] == UInt8(ascii: "+") ? 1 : -1)
            } else {
                return nil
            }
        }
        let days = CivilDate.days(year: Int64(year), month: Int64(month), day: Int64(day))
        let seconds = days * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetSeconds)
        return seconds * 1000 + Int64(millis)
    }

    /// The number of days of `month` (1...12) in `year` (proleptic Gregorian).
    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// The epoch milliseconds ``iso8601(_:)`` writes as a calendar time: years 0001 to 9999.
    public static let calendarMillis: ClosedRange<Int64> = -62_135_596_800_000...253_402_300_799_999

    /// Formats epoch ms as `YYYY-MM-DDTHH:MM:SSZ` (UTC), milliseconds dropped when zero. A value outside years
    /// 0001–9999 (a forged or mistyped time) is written as its number of milliseconds, never trapped on.
    public static func iso8601(_ millis: Int64) -> String {
        guard calendarMillis.contains(millis) else { return "\(millis) ms since 1970 (not a calendar time)" }
        let seconds = Int64((Double(millis) / 1000).rounded(.down))
        let ms = Int(millis - seconds * 1000)
        var days = Int(seconds / 86_400)
        var rem = Int(seconds % 86_400)
        if rem < 0 {
            rem += 86_400
            days -= 1
        }
        let date = CivilDate.date(days: Int64(days))
        let (y, m, d) = (Int(date.year), Int(date.month), Int(date.day))
        func pad(_ v: Int, _ n: Int) -> String {
            let s = String(v)
            return String(repeating: "0", count: max(0, n - s.count)) + s
        }
        var out =
            "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(pad(rem / 3600, 2)):\(pad(rem % 3600 / 60, 2)):\(pad(rem % 60, 2))"
        if ms != 0 { out += ".\(pad(ms, 3))" }
        return out + "Z"
    }
}
