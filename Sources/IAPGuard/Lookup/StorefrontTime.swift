import Foundation

/// Formats times for a lookup: RFC 3339 UTC, and local time in a storefront's country (one representative
/// time zone per country; countries spanning several zones use their most populous one, so local times are a
/// guide, not evidence).
enum StorefrontTime {
    /// ISO 3166-1 alpha-3 → a representative IANA time zone.
    static let zones: [String: String] = [
        "ARE": "Asia/Dubai", "ARG": "America/Argentina/Buenos_Aires", "AUS": "Australia/Sydney",
        "AUT": "Europe/Vienna", "BEL": "Europe/Brussels", "BRA": "America/Sao_Paulo", "CAN": "America/Toronto",
        "CHE": "Europe/Zurich", "CHL": "America/Santiago", "CHN": "Asia/Shanghai", "COL": "America/Bogota",
        "CZE": "Europe/Prague", "DEU": "Europe/Berlin", "DNK": "Europe/Copenhagen", "EGY": "Africa/Cairo",
        "ESP": "Europe/Madrid", "FIN": "Europe/Helsinki", "FRA": "Europe/Paris", "GBR": "Europe/London",
        "GRC": "Europe/Athens", "HKG": "Asia/Hong_Kong", "HUN": "Europe/Budapest", "IDN": "Asia/Jakarta",
        "IND": "Asia/Kolkata", "IRL": "Europe/Dublin", "ISR": "Asia/Jerusalem", "ITA": "Europe/Rome",
        "JPN": "Asia/Tokyo", "KAZ": "Asia/Almaty", "KOR": "Asia/Seoul", "MEX": "America/Mexico_City",
        "MYS": "Asia/Kuala_Lumpur", "NGA": "Africa/Lagos", "NLD": "Europe/Amsterdam", "NOR": "Europe/Oslo",
        "NZL": "Pacific/Auckland", "PAK": "Asia/Karachi", "PER": "America/Lima", "PHL": "Asia/Manila",
        "POL": "Europe/Warsaw", "PRT": "Europe/Lisbon", "ROU": "Europe/Bucharest", "RUS": "Europe/Moscow",
        "SAU": "Asia/Riyadh", "SGP": "Asia/Singapore", "SWE": "Europe/Stockholm", "THA": "Asia/Bangkok",
        "TUR": "Europe/Istanbul", "TWN": "Asia/Taipei", "UKR": "Europe/Kyiv", "USA": "America/New_York",
        "VNM": "Asia/Ho_Chi_Minh", "ZAF": "Africa/Johannesburg",
    ]

    /// `2026-03-01T12:00:00.000Z`.
    static func utc(_ millis: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: date(millis))
    }

    /// `2026-03-01 12:00 UTC` (short, for text output).
    static func shortUTC(_ millis: Int64) -> String {
        format(millis, zone: TimeZone(identifier: "UTC"), pattern: "yyyy-MM-dd HH:mm") + " UTC"
    }

    /// `2026-03-01 15:00 +03:00 TUR`, or `nil` when the storefront's zone is unknown.
    static func local(_ millis: Int64, storefront: String?) -> String? {
        guard let storefront, let name = zones[storefront.uppercased()], let zone = TimeZone(identifier: name)
        else { return nil }
        return format(millis, zone: zone, pattern: "yyyy-MM-dd HH:mm xxx") + " " + storefront.uppercased()
    }

    private static func format(_ millis: Int64, zone: TimeZone?, pattern: String) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.timeZone = zone
        formatter.dateFormat = pattern
        return formatter.string(from: date(millis))
    }

    private static func date(_ millis: Int64) -> Date { Date(timeIntervalSince1970: Double(millis) / 1000) }
}
