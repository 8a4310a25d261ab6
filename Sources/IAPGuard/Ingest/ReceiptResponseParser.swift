import Foundation

/// Turns one stored legacy `verifyReceipt` response (bare, or wrapped with the backend's metadata) into
/// transaction sightings: one per entry of `receipt.in_app[]` and `latest_receipt_info[]`.
public struct ReceiptResponseParser: Sendable {
    public let sourceName: String

    public init(sourceName: String) { self.sourceName = sourceName }

    /// Parses one line. `payloadHash` is the SHA-256 of the line's bytes; `location` is `file:line`.
    public func parse(_ object: JSONObject, payloadHash: String, location: String) throws -> [AppleSighting] {
        let response: JSONObject
        var userID: String?
        var orderID: String?
        var receivedAt: Int64?
        var receiptData: String?
        if let wrapped = try object.object("response") {
            response = wrapped
            userID = try object.string("user_id")
            orderID = try object.string("order_id")
            receivedAt = try object.time("received_at")
            receiptData = try object.string("receipt_data")
        } else if object.has("status") {
            response = object
        } else {
            throw RecordError("neither a verifyReceipt response (no \"status\") nor a wrapped one (no \"response\")")
        }
        guard let status = try response.int64("status") else {
            throw RecordError("\(response.path)status: missing")
        }
        let environmentText = try response.string("environment")
        let statedEnvironment = environmentText.map { AppleEnvironment(appleValue: $0)?.rawValue ?? $0 }
        // Apple has spelled this flag both ways, as a boolean or as text.
        let retryable = response.describedValue("is-retryable") ?? response.describedValue("is_retryable")
        let receipt = try response.object("receipt")
        // A valid answer carries its receipt; without it the response would leave no sighting at all.
        let isValidAnswer = status == 0 || status == 21006
        if isValidAnswer {
            guard let receipt else {
                throw RecordError("\(response.path)receipt: missing (a status \(status) response carries the receipt)")
            }
            guard receipt.has("in_app") else { throw RecordError("\(receipt.path)in_app: missing") }
        }
        var entries = try receipt?.objects("in_app") ?? []
        if isValidAnswer, let receipt, try receipt.strictString("bundle_id").map({ !$0.isEmpty }) != true {
            throw RecordError("\(receipt.path)bundle_id: missing")
        }
        let bundleID = try receipt?.string("bundle_id")
        // Only read for the environment; a value of another type is no reason to drop the receipt.
        let receiptType = try? receipt?.string("receipt_type")
        let (environment, environmentConflict) = Self.environment(stated: statedEnvironment, receiptType: receiptType)
        let requestDate = try receipt?.int64("request_date_ms")
        // Only read for the forged-template marker; a malformed value is no reason to drop the receipt.
        let downloadID = try? receipt?.int64("download_id")
        entries += try response.objects("latest_receipt_info")

        var transactions: [(AppleTransaction, [String])] = []
        for entry in entries {
            transactions.append(
                try transaction(
                    from: entry, bundleID: bundleID, environment: environment, requestDate: requestDate,
                    downloadID: downloadID))
        }
        let receiptKey: String
        if let receiptData, !receiptData.isEmpty {
            receiptKey = Hashing.sha256Hex(receiptData)
        } else {
            let ids = transactions.map(\.0.transactionID).sorted().joined(separator: ",")
            receiptKey = Hashing.sha256Hex("\(bundleID ?? "")|\(ids)")
        }
        var detail = ReceiptStatus.explanation(status)
        if let retryable { detail += " (is-retryable: \(retryable))" }
        var outcome = VerificationOutcome(status: .notSigned, reason: "status-\(status)", detail: detail)
        // Apple decodes the receipt only for status 0 and 21006 (an expired auto-renewable subscription); an
        // error answer is the status alone, and a 21006 answer is about a subscription, so it carries at least
        // one purchase with an expiry. Purchases under any other status, or a 21006 answer without a single
        // expiry, were not written by Apple: they are no copy of Apple's answer, and a credit resting on them is
        // a forgery's (IAP-020).
        if !transactions.isEmpty {
            if !isValidAnswer {
                outcome = .failed(
                    .impossibleReceiptStatus,
                    "\(detail); Apple returns a decoded receipt only with status 0 or 21006, yet this response "
                        + "carries \(transactions.count) purchase(s)")
            } else if status == 21006, !Self.namesAnExpiry(entries + [response] + (receipt.map { [$0] } ?? [])) {
                outcome = .failed(
                    .impossibleReceiptStatus,
                    "\(detail); yet none of its \(transactions.count) purchase(s) is a subscription with an expiry")
            }
        }
        return transactions.map { transaction, anomalies in
            var sighting = AppleSighting(
                transaction: transaction, sourceKind: .receipt, sourceName: sourceName, sourceRef: location,
                payloadHash: payloadHash, verification: outcome)
            sighting.receiptKey = receiptKey
            sighting.receiptStatus = status
            sighting.submittedByUserID = userID
            sighting.submittedOrderID = orderID
            sighting.receivedAt = receivedAt
            sighting.anomalies = anomalies
            if environmentConflict { sighting.anomalies.append(Self.environmentConflict) }
            return sighting
        }
    }

    /// Whether any of the objects names a subscription's expiry, in any of the spellings Apple used (iOS 6-style
    /// receipts wrote `expires_date` in milliseconds and kept the expired one in `latest_expired_receipt_info`).
    static func namesAnExpiry(_ objects: [JSONObject]) -> Bool {
        objects.contains { object in
            ["expires_date_ms", "expires_date", "expires_date_formatted", "latest_expired_receipt_info"].contains {
                object.has($0)
            }
        }
    }

    private func transaction(
        from entry: JSONObject, bundleID: String?, environment: String?, requestDate: Int64?, downloadID: Int64?
    ) throws -> (AppleTransaction, [String]) {
        var t = AppleTransaction(transactionID: try entry.requiredString("transaction_id"))
        t.originalTransactionID = try entry.string("original_transaction_id")
        t.webOrderLineItemID = try entry.string("web_order_line_item_id")
        t.bundleID = bundleID
        t.productID = try entry.string("product_id")
        t.quantity = try entry.int64("quantity")
        t.purchaseDate = try entry.int64("purchase_date_ms")
        t.originalPurchaseDate = try entry.int64("original_purchase_date_ms")
        t.expiresDate = try entry.int64("expires_date_ms")
        t.environment = environment
        t.inAppOwnershipType = try entry.string("in_app_ownership_type")
        t.revocationDate = try entry.int64("cancellation_date_ms")
        t.revocationReason = try entry.int64("cancellation_reason")
        // Apple sets `cancellation_date` both when it refunds and when the user upgrades the subscription;
        // `is_upgraded` tells the upgrade apart.
        if t.revocationDate != nil, ["true", "1"].contains(entry.describedValue("is_upgraded")?.lowercased()) {
            t.revocationType = AppleTransaction.upgradeRevocationType
        }
        t.signedDate = requestDate

        var anomalies: [String] = []
        // A date past the year 9999 (or before year 1) is no time Apple writes: a forger's, and never used as a
        // time (the arithmetic below and the reports would overflow on it).
        let calendar = TimeParser.calendarMillis
        if [t.purchaseDate, t.originalPurchaseDate, t.expiresDate, t.revocationDate].contains(where: {
            $0.map { !calendar.contains($0) } ?? false
        }) {
            anomalies.append(Self.dateOutOfRange)
            for keyPath in [\AppleTransaction.purchaseDate, \.originalPurchaseDate, \.expiresDate, \.revocationDate]
            where t[keyPath: keyPath].map({ !calendar.contains($0) }) ?? false {
                t[keyPath: keyPath] = nil
            }
        }
        for (text, ms) in [
            ("purchase_date", t.purchaseDate), ("original_purchase_date", t.originalPurchaseDate),
            ("expires_date", t.expiresDate), ("cancellation_date", t.revocationDate),
        ] {
            guard let raw = try entry.string(text), let ms else { continue }
            if let parsed = Self.legacyDate(raw), abs(parsed - ms) > 1000 {
                anomalies.append("date-mismatch")
                break
            }
        }
        // Dates Apple's servers never write: a purchase after the verifyReceipt request that answers it, an
        // original purchase after the purchase, a date before the App Store sold anything (seconds written as
        // milliseconds give 1970).
        if let purchase = t.purchaseDate, let requestDate, purchase > requestDate + Self.clockSlack {
            anomalies.append("purchase-after-request")
        }
        if let original = t.originalPurchaseDate, let purchase = t.purchaseDate, original > purchase + Self.clockSlack {
            anomalies.append("original-after-purchase")
        }
        if [t.purchaseDate, t.originalPurchaseDate].contains(where: {
            ($0 ?? Self.appStoreOpened) < Self.appStoreOpened
        }) {
            anomalies.append("date-before-app-store")
        }
        if let quantity = t.quantity, quantity < 1 {
            anomalies.append("quantity-not-positive")
        }
        if let expires = t.expiresDate, let purchase = t.purchaseDate, expires - purchase > 10 * 366 * 86_400_000 {
            anomalies.append("expiry-far-future")
        }
        if let expires = t.expiresDate, Self.sentinelExpiryYears.contains(where: { $0.contains(expires) }) {
            anomalies.append("expiry-sentinel-year")
        }
        if downloadID == 9999 && t.transactionID == "1000000000000000" {
            anomalies.append("forged-template-ids")
        }
        if let bundleID, let product = t.productID, !product.hasPrefix(bundleID + ".") {
            anomalies.append("product-outside-bundle")
        }
        if !TextTrim.isASCIIDigits(t.transactionID) {
            anomalies.append("non-numeric-id")
        }
        return (t, anomalies)
    }

    /// The anomaly noted for a date outside years 0001–9999 (the date itself is dropped).
    static let dateOutOfRange = "date-out-of-range"

    /// The anomaly noted when the response's `environment` and its receipt's `receipt_type` disagree.
    static let environmentConflict = "environment-conflict"

    /// The environment of a response's transactions and whether its two markers disagree. `receipt_type` is
    /// where the receipt was made; `environment` may be what the backend wrote in its place (the URL it
    /// called first), so a sandbox `receipt_type` wins: a Sandbox purchase stored as Production would escape
    /// IAP-017. Otherwise the stated environment stays as it is.
    static func environment(stated: String?, receiptType: String?) -> (environment: String?, conflict: Bool) {
        guard let receiptType, let made = receiptTypeEnvironment(receiptType) else { return (stated, false) }
        let conflict = stated.map { $0 != made.rawValue } ?? false
        return (made == .sandbox ? made.rawValue : stated, conflict)
    }

    /// The environment Apple's `receipt_type` values name: `Production` and `ProductionVPP` are Production,
    /// `ProductionSandbox` and `ProductionVPPSandbox` Sandbox; any other value names none.
    static func receiptTypeEnvironment(_ receiptType: String) -> AppleEnvironment? {
        switch receiptType.lowercased() {
        case "production", "productionvpp": return .production
        case "productionsandbox", "productionvppsandbox": return .sandbox
        default: return nil
        }
    }

    /// Clock differences between Apple's servers tolerated before two dates are called out of order.
    static let clockSlack: Int64 = 3_600_000
    /// 2008-07-10T00:00:00Z, when the App Store opened: no purchase is older.
    static let appStoreOpened: Int64 = 1_215_648_000_000

    /// Expiry years that receipt forgers write and Apple never does (2099 and 6666), as epoch-ms ranges.
    static let sentinelExpiryYears: [Range<Int64>] = [
        4_070_908_800_000..<4_102_444_800_000,
        148_191_465_600_000..<148_223_001_600_000,
    ]

    /// Parses Apple's legacy date strings (`2020-08-07 03:30:03 Etc/GMT`) into epoch ms; `nil` if the
    /// zone is not GMT/UTC (the `_pst` twins are not compared).
    static func legacyDate(_ text: String) -> Int64? {
        // Split on the bytes: a space is one byte, and a part holding anything but ASCII fails below anyway.
        let parts = text.utf8.split(separator: UInt8(ascii: " "))
        guard parts.count == 3, legacyZones.contains(where: { $0.utf8.elementsEqual(parts[2]) }) else { return nil }
        // `date` + "T" + `time` + "Z" as bytes: one small buffer per date, no strings.
        var chars: [UInt8] = []
        chars.reserveCapacity(parts[0].count + parts[1].count + 2)
        chars.append(contentsOf: parts[0])
        chars.append(UInt8(ascii: "T"))
        chars.append(contentsOf: parts[1])
        chars.append(UInt8(ascii: "Z"))
        return TimeParser.rfc3339(utf8: chars)
    }

    /// The time zones legacy receipts name.
    private static let legacyZones = ["Etc/GMT", "GMT", "UTC", "Etc/UTC"]
}
