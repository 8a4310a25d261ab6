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
            let object = try JSONObject.parse(trimmed.utf8, rejectingDuplicateKeys: true)
            guard let signed = try object.strictString("signedTransactionInfo") else {
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

    /// Maps Apple's `JWSTransactionDecodedPayload` onto ``AppleTransaction``, holding it to Apple's schema:
    /// `transactionId`, `productId` and `purchaseDate` are required, ids and codes are JSON strings, dates and
    /// amounts JSON integers. Anything else is a `schema:` error naming the field (a payload of another
    /// shape is not Apple's, however well signed). `price` 0 is a real price (free offers) and is accepted.
    /// Offer, billing-plan and Advanced Commerce fields are read by ``readTerms(_:into:)``; members Apple's
    /// schema does not name are kept as text.
    public static func transaction(from p: JSONObject) throws -> AppleTransaction {
        var t = AppleTransaction(transactionID: try p.requiredSchemaString("transactionId"))
        t.originalTransactionID = try p.schemaString("originalTransactionId")
        t.webOrderLineItemID = try p.schemaString("webOrderLineItemId")
        t.bundleID = try p.schemaString("bundleId")
        t.productID = try p.requiredSchemaString("productId")
        t.type = try p.schemaString("type")
        t.quantity = try p.schemaInteger("quantity")
        t.purchaseDate = try p.requiredSchemaInteger("purchaseDate")
        t.originalPurchaseDate = try p.schemaInteger("originalPurchaseDate")
        t.expiresDate = try p.schemaInteger("expiresDate")
        // Stored in Apple's spelling when it names a known environment in another case (`sandbox`,
        // `SANDBOX`), as the verifier reads it: rules compare the exact words (`environment = 'Sandbox'`).
        t.environment = try p.schemaString("environment").map { AppleEnvironment(appleValue: $0)?.rawValue ?? $0 }
        t.storefront = try p.schemaString("storefront")
        t.currency = try p.schemaString("currency")
        t.price = try p.schemaInteger("price")
        t.appAccountToken = try p.schemaString("appAccountToken")?.lowercased()
        t.inAppOwnershipType = try p.schemaString("inAppOwnershipType")
        t.transactionReason = try p.schemaString("transactionReason")
        t.revocationDate = try p.schemaInteger("revocationDate")
        t.revocationReason = try p.schemaInteger("revocationReason")
        t.revocationType = try p.schemaString("revocationType")
        t.revocationPercentage = try p.schemaInteger("revocationPercentage")
        if try p.schemaBoolean("isUpgraded") == true, t.revocationDate != nil, t.revocationReason == nil,
            t.revocationType == nil, t.type.map { Self.canBeUpgraded(type: $0) } ?? true
        {
            // The subscription ended early because the user upgraded: no refund reason or type, so the
            // revocation date is the upgrade's, not a refund's. Only an auto-renewable subscription is
            // upgraded; a consumable or non-consumable revoked with `isUpgraded` stays a refund.
            t.revocationType = AppleTransaction.upgradeRevocationType
        }
        t.signedDate = try p.schemaInteger("signedDate")
        t.appTransactionID = try p.schemaString("appTransactionId")
        try readTerms(p, into: &t)
        return t
    }

    /// Whether a transaction of Apple's `type` can end in an upgrade: only auto-renewable subscriptions move
    /// to a higher plan of their group.
    static func canBeUpgraded(type: String) -> Bool {
        type == "Auto-Renewable Subscription"
    }
}
