import Foundation

/// Parsing of the times rule files and fixtures may write as text: `YYYY-MM-DD` (00:00 UTC) or RFC 3339.
public enum EpochTime {
    /// `YYYY-MM-DD` → epoch ms at 00:00 UTC.
    public static func parseDay(_ text: String) -> Int64? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
            let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2]),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var components = DateComponents()
        components.calendar = Calendar(identifier: .gregorian)
        components.timeZone = TimeZone(identifier: "UTC")
        components.year = year
        components.month = month
        components.day = day
        guard components.isValidDate, let date = components.date else { return nil }
        return Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// `YYYY-MM-DD`, RFC 3339 (`2026-03-01T12:00:00Z`, fractional seconds and offsets allowed) or integer
    /// epoch ms → epoch ms.
    public static func parse(_ text: String) -> Int64? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let ms = Int64(trimmed) { return ms }
        if let day = parseDay(trimmed) { return day }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        if let date = formatter.date(from: trimmed) { return Int64((date.timeIntervalSince1970 * 1000).rounded()) }
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: trimmed) { return Int64((date.timeIntervalSince1970 * 1000).rounded()) }
        return nil
    }

    /// Epoch ms → `YYYY-MM-DD` (UTC).
    public static func day(_ millis: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date(timeIntervalSince1970: Double(millis) / 1000))
    }
}
