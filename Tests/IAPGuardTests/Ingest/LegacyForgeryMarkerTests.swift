import Foundation
import Testing

@testable import IAPGuard

/// Forgery markers seen in the wild on legacy `verifyReceipt` responses become sighting anomalies that
/// IAP-007 reports (the rule's own inline tests cover the id-based markers).
@Suite struct LegacyForgeryMarkerTests {
    static func anomalies(receipt: String, entry: String) throws -> [String] {
        let line =
            #"{"status":0,"environment":"Production","receipt":{"bundle_id":"com.example.coins","# + receipt
            + #""in_app":[{"quantity":"1","product_id":"com.example.coins.pack100","purchase_date_ms":"1596771003000","#
            + entry + "}]}}"
        let object = try JSONObject.parse(Array(line.utf8))
        let sightings = try ReceiptResponseParser(sourceName: "r").parse(object, payloadHash: "h", location: "r:1")
        return try #require(sightings.first).anomalies
    }

    @Test(arguments: ["4070908800000", "4102444799999", "148191465600000", "148223001599999"])
    func anExpiryInTheYears2099Or6666IsASentinelYear(expiry: String) throws {
        let flags = try Self.anomalies(
            receipt: "", entry: #""transaction_id":"2000000000000001","expires_date_ms":"\#(expiry)""#)
        #expect(flags.contains("expiry-sentinel-year"))
    }

    @Test(arguments: ["4070908799999", "4102444800000", "1627000000000"])
    func anExpiryOutsideThoseYearsIsNoSentinel(expiry: String) throws {
        let flags = try Self.anomalies(
            receipt: "", entry: #""transaction_id":"2000000000000001","expires_date_ms":"\#(expiry)""#)
        #expect(!flags.contains("expiry-sentinel-year"))
    }

    @Test func downloadID9999WithTransaction1000000000000000IsTheForgedTemplate() throws {
        let forged = try Self.anomalies(
            receipt: #""download_id":9999,"#, entry: #""transaction_id":"1000000000000000""#)
        #expect(forged.contains("forged-template-ids"))
        let otherTransaction = try Self.anomalies(
            receipt: #""download_id":9999,"#, entry: #""transaction_id":"1000000000000001""#)
        #expect(!otherTransaction.contains("forged-template-ids"))
        let otherDownload = try Self.anomalies(
            receipt: #""download_id":"84759234","#, entry: #""transaction_id":"1000000000000000""#)
        #expect(!otherDownload.contains("forged-template-ids"))
    }

    /// The entry's purchase is 2020-08-07T03:30:03Z. Apple never answers a request with a purchase made after
    /// it, an original purchase after the purchase, or a date before the App Store opened (seconds written as
    /// milliseconds); within an hour of clock difference it is not called out.
    @Test func datesAppleNeverWritesAreAnomalies() throws {
        let tx = #""transaction_id":"2000000000000001""#
        let early = try Self.anomalies(receipt: #""request_date_ms":"1596500000000","#, entry: tx)
        #expect(early.contains("purchase-after-request"))
        let skewed = try Self.anomalies(receipt: #""request_date_ms":"1596770000000","#, entry: tx)
        #expect(skewed.isEmpty)
        let later = try Self.anomalies(
            receipt: "", entry: tx + #","original_purchase_date_ms":"1596900000000""#)
        #expect(later == ["original-after-purchase"])
        let seconds = try Self.anomalies(receipt: "", entry: tx + #","original_purchase_date_ms":"1596771003""#)
        #expect(seconds == ["date-before-app-store"])
        let none = try Self.anomalies(receipt: "", entry: tx + #","original_purchase_date_ms":"1500000000000""#)
        #expect(none.isEmpty)
    }

    /// A date past the year 9999 is a marker and is dropped, whichever date it is and however extreme: the
    /// parser's date arithmetic never traps on it.
    @Test(arguments: ["original_purchase_date_ms", "expires_date_ms", "cancellation_date_ms"])
    func aDatePastTheYear9999IsAMarkerAndIsDropped(field: String) throws {
        for value in ["9223372036854775807", "-9223372036854775808", "253402300800000"] {
            let line =
                #"{"status":0,"environment":"Production","receipt":{"bundle_id":"com.example.coins","request_date_ms":"1596771003000","in_app":[{"quantity":"1","product_id":"com.example.coins.pack100","transaction_id":"2000000000000001","purchase_date_ms":"9223372036854775807","\#(field)":"\#(value)"}]}}"#
            let sightings = try ReceiptResponseParser(sourceName: "r").parse(
                JSONObject.parse(Array(line.utf8)), payloadHash: "h", location: "r:1")
            let sighting = try #require(sightings.first)
            #expect(sighting.anomalies.contains("date-out-of-range"), "\(field)=\(value)")
            #expect(sighting.transaction.purchaseDate == nil)
            #expect(sighting.transaction.originalPurchaseDate == nil && sighting.transaction.expiresDate == nil)
            #expect(sighting.transaction.revocationDate == nil)
        }
    }

    @Test func aMalformedDownloadIDDoesNotDropTheReceipt() throws {
        let flags = try Self.anomalies(
            receipt: #""download_id":{"x":1},"#, entry: #""transaction_id":"2000000000000001""#)
        #expect(flags.isEmpty)
    }

    @Test func legacyDateTextsParseInTheirFourZonesAndNothingElse() {
        let expected: Int64 = 1_596_771_003_000
        for zone in ["Etc/GMT", "GMT", "UTC", "Etc/UTC"] {
            #expect(ReceiptResponseParser.legacyDate("2020-08-07 03:30:03 \(zone)") == expected)
        }
        // Runs of spaces separate like one (the parts are split with empty ones omitted).
        #expect(ReceiptResponseParser.legacyDate("2020-08-07  03:30:03   Etc/GMT") == expected)
        for bad in [
            "2020-08-07 03:30:03 America/Los_Angeles", "2020-08-07 03:30:03", "2020-08-07T03:30:03 Etc/GMT",
            "2020-13-07 03:30:03 Etc/GMT", "2020-08-07 03:30:03 Etc/GMT extra", "2020-08-07 03:30:03Z Etc/GMT",
            "２020-08-07 03:30:03 Etc/GMT", "",
        ] {
            #expect(ReceiptResponseParser.legacyDate(bad) == nil, "\(bad)")
        }
    }
}
