import Foundation
import Testing

@testable import IAPGuard

/// Values that look right to a person but never join or compare as they should (a byte order mark mid-file,
/// a spreadsheet-mangled user id, a two-letter country) are read the same way in users, orders and credits:
/// mapped when the meaning is certain, else quarantined with `file:line` and the field at fault.
@Suite struct BackendIDHygieneTests {
    /// Concatenated exports leave a BOM at the start of a line mid-file: it became part of the id and made
    /// 44 false IAP-012 hits in the probe.
    @Test func anInvisibleCharacterInAnIdIsARecordErrorInEveryBackendSource() throws {
        let world = try IngestTestWorld()
        try world.write(
            "users.csv",
            "user_id,country\nu-1,TUR\n\u{FEFF}u-2,TUR\nu-\u{200B}3,TUR\n2.1E+5,TUR\nu-1\u{200B},TUR\n"
                + Self.padding("p-u,TUR"))
        try world.write(
            "orders.csv",
            "order_id,user_id,created_at\no-1,u-1,1767225600000\n\u{FEFF}o-2,u-1,1767225600000\n"
                + "o-3,u\u{1B}[31m-1,1767225600000\n" + Self.padding("p-o,u-1,1767225600000"))
        try world.write(
            "credits.jsonl",
            #"""
            {"credit_id":"c-1","user_id":"u-1","units":1,"credited_at":1767225600000}
            {"credit_id":"c-2","user_id":"u-1\u202e","units":1,"credited_at":1767225600000}
            {"credit_id":"c-3","user_id":" u-1\u200b","units":1,"credited_at":1767225600000}
            {"credit_id":"p-c","user_id":"u-1","units":1,"credited_at":1767225600000}
            {"credit_id":"p-d","user_id":"u-1","units":1,"credited_at":1767225600000}

            """#)
        let config = try world.config(sources: [
            "{name: users, kind: users, format: csv, path: data/users.csv}",
            "{name: orders, kind: orders, format: csv, path: data/orders.csv}",
            "{name: credits, kind: credits, format: jsonl, path: data/credits.jsonl}",
        ])
        _ = try world.run(config)
        #expect(try world.rows(config, "SELECT user_id FROM users WHERE user_id NOT LIKE 'p-%'") == [["u-1"]])
        #expect(try world.rows(config, "SELECT order_id FROM orders WHERE order_id NOT LIKE 'p-%'") == [["o-1"]])
        #expect(try world.rows(config, "SELECT credit_id FROM credits WHERE credit_id NOT LIKE 'p-%'") == [["c-1"]])
        let quarantined = try world.rows(config, "SELECT location, reason FROM quarantine ORDER BY location")
        let byLocation = Dictionary(
            quarantined.map { (($0[0] ?? "").components(separatedBy: "/").last ?? "", $0[1] ?? "") },
            uniquingKeysWith: { a, _ in a })
        #expect(
            byLocation["users.csv:3"]?.hasPrefix(
                "user_id: contains the invisible character U+FEFF (byte order mark) at character 1") == true,
            "\(byLocation)")
        #expect(byLocation["users.csv:4"]?.contains("U+200B (zero-width space) at character 3") == true)
        #expect(
            byLocation["users.csv:5"]?.hasPrefix(#"user_id: "2.1E+5" is a number as a spreadsheet shows it"#) == true)
        #expect(byLocation["orders.csv:3"]?.hasPrefix("order_id: contains the invisible character U+FEFF") == true)
        #expect(
            byLocation["orders.csv:4"]?.hasPrefix("user_id: contains the invisible character U+001B (escape)") == true)
        #expect(byLocation["credits.jsonl:2"]?.hasPrefix("user_id: contains the invisible character U+202E") == true)
        // A zero-width space at an id's end is not trimmed like a space: it would pass for u-1.
        #expect(byLocation["users.csv:6"]?.contains("U+200B (zero-width space) at character 4") == true)
        #expect(byLocation["credits.jsonl:3"]?.contains("U+200B (zero-width space) at character 4") == true)
        #expect(quarantined.count == 8)
    }

    /// Apple's storefronts are alpha-3; a backend that writes `US` made every purchase look like a second
    /// storefront (IAP-009) or a foreign one (IAP-008).
    @Test func twoLetterCountriesAreReadAsTheirAlpha3CodeAndOtherTextIsARecordError() throws {
        let world = try IngestTestWorld()
        try world.write("users.csv", "user_id,country\nu-1,ar\nu-2,Argentina\nu-3,GBR\nu-4,\n")
        try world.write(
            "orders.csv",
            "order_id,user_id,storefront,user_country,created_at\no-1,u-1,US,AR,1767225600000\n"
                + "o-2,u-1,ZZ,ARG,1767225600000\no-3,u-1,usa,XX,1767225600000\n"
                + Self.padding("p-o,u-1,GBR,GBR,1767225600000"))
        let config = try world.config(sources: [
            "{name: users, kind: users, format: csv, path: data/users.csv}",
            "{name: orders, kind: orders, format: csv, path: data/orders.csv}",
        ])
        _ = try world.run(config)
        #expect(
            try world.rows(config, "SELECT user_id, country FROM users ORDER BY user_id")
                == [["u-1", "ARG"], ["u-3", "GBR"], ["u-4", nil]])
        #expect(
            try world.rows(config, "SELECT order_id, storefront, user_country FROM orders WHERE order_id = 'o-1'")
                == [["o-1", "USA", "ARG"]])
        let reasons = try world.rows(config, "SELECT reason FROM quarantine ORDER BY location").map { $0[0] ?? "" }
        #expect(
            reasons == [
                #"storefront: "ZZ" is not an ISO 3166-1 country code (expected alpha-3 like USA, or alpha-2 like US)"#,
                #"user_country: "XX" is not an ISO 3166-1 country code (expected alpha-3 like USA, or alpha-2 like US)"#,
                #"country: "Argentina" is not an ISO 3166-1 country code (expected alpha-3 like USA, or alpha-2 like US)"#,
            ])
    }

    /// Good rows that keep the bad share of a small file under the source's limit: `first` with `-1`… appended
    /// to its first field, five times.
    static func padding(_ row: String) -> String {
        let fields = row.split(separator: ",", maxSplits: 1)
        return (1...5).map { "\(fields[0])\($0),\(fields.count > 1 ? fields[1] : "")\n" }.joined()
    }

    @Test func theCountryTableHasEveryCurrentCodeOnce() {
        #expect(CountryCode.byAlpha2.count == 250)
        #expect(CountryCode.alpha3Codes.count == 250)
        #expect(CountryCode.alpha3("GB") == "GBR" && CountryCode.alpha3("XK") == "XKS")
        #expect(CountryCode.alpha3("UK") == nil && CountryCode.alpha3("EUR") == nil)
    }
}
