import Foundation

/// Turns JWS signed transactions (a compact JWS per line, or an object with `signedTransactionInfo`)
/// into sightings, verified by the verify stage.
public struct SignedTransactionParser: Sendable {
    public let sourceName: String
    public let verifier: any AppleRecordVerifier

    public init(sourceName: String, verifier: any AppleRecordVerifier) {
        self.sourceName = sourceName
        self.verifier = verifier
    }

    /// Parses one line (already known to be valid UTF-8 text).
    public func parse(_ text: String, payloadHash: String, location: String) throws -> AppleSighting {
        let trimmed = TextTrim.whitespaces(text)
        var compact = trimmed
        var userID: String?
        var orderID: String?
        var receivedAt: Int64?
        if trimmed.utf8.first == UInt8(ascii: "{") {
            let object = try JSONObject.parse(trimmed.utf8)
            guard let signed = try object.string("signedTransactionInfo") else {
                throw RecordError("no signedTransactionInfo in the object")
            }
            compact = signed
            userID = try object.string("user_id")
            orderID = try object.string("order_id")
            receivedAt = try object.time("received_at")
        }
        let jws: CompactJWS
        do {
            jws = try CompactJWS(compact)
        } catch let error as CompactJWS.FormatError {
            throw RecordError("bad-format: \(error.message)")
        }
        let payload = jws.payloadObject
        let transaction = try Self.transaction(from: payload)
        var sighting = AppleSighting(
            transaction: transaction, sourceKind: .jws, sourceName: sourceName, sourceRef: location,
            payloadHash: payloadHash, verification: verifier.verifyTransaction(jws))
        sighting.receiptKey = Hashing.sha256Hex(jws.compact)
        sighting.submittedByUserID = userID
        sighting.submittedOrderID = orderID
        sighting.receivedAt = receivedAt
        if !TextTrim.isASCIIDigits(transaction.transactionID) {
            sighting.anomalies.append("non-numeric-id")
        }
        return sighting
    }

    /// Maps Apple's `JWSTransactionDecodedPayload` onto ``AppleTransaction``.
    public static func transaction(from p: JSONObject) throws -> AppleTransaction {
        var t = AppleTransaction(transactionID: try p.requiredString("transactionId"))
        t.originalTransactionID = try p.string("originalTransactionId")
        t.webOrderLineItemID = try p.string("webOrderLineItemId")
        t.bundleID = try p.string("bundleId")
        t.productID = try p.string("productId")
        t.type = try p.string("type")
        t.quantity = try p.int64("quantity")
        t.purchaseDate = try p.int64("purchaseDate")
        t.originalPurchaseDate = try p.int64("originalPurchaseDate")
        t.expiresDate = try p.int64("expiresDate")
        t.environment = try p.string("environment")
        t.storefront = try p.string("storefront")
        t.currency = try p.string("currency")
        t.price = try p.int64("price")
        t.appAccountToken = try p.string("appAccountToken")?.lowercased()
        t.inAppOwnershipType = try p.string("inAppOwnershipType")
        t.transactionReason = try p.string("transactionReason")
        t.revocationDate = try p.int64("revocationDate")
        t.revocationReason = try p.int64("revocationReason")
        t.revocationType = try p.string("revocationType")
        t.revocationPercentage = try p.int64("revocationPercentage")
        t.signedDate = try p.int64("signedDate")
        t.appTransactionID = try p.string("appTransactionId")
        return t
    }
}
