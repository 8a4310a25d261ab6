extension AppleTransaction {
    /// Exactly `String(describing: self)` — the text ``AppleSighting/sightingID`` hashes, so stored sighting
    /// ids do not change — built without reflection, which took most of the store's write time. A test pins
    /// the equality; a new stored property must be added here in declaration order. `appTransactionID` and the
    /// purchase terms declared after it (offer, billing plan, Advanced Commerce, unknown fields) are
    /// deliberately left out (the payload hash already tells such copies apart), so ids stored before they
    /// were read do not change.
    var stableDescription: String {
        var text = "AppleTransaction(transactionID: " + transactionID.debugDescription
        text.reserveCapacity(700)
        func add(_ name: String, _ value: String?) {
            text += ", " + name + ": " + value.debugDescription
        }
        func add(_ name: String, _ value: Int64?) {
            text += ", " + name + ": " + value.debugDescription
        }
        add("originalTransactionID", originalTransactionID)
        add("webOrderLineItemID", webOrderLineItemID)
        add("bundleID", bundleID)
        add("productID", productID)
        add("type", type)
        add("quantity", quantity)
        add("purchaseDate", purchaseDate)
        add("originalPurchaseDate", originalPurchaseDate)
        add("expiresDate", expiresDate)
        add("environment", environment)
        add("storefront", storefront)
        add("currency", currency)
        add("price", price)
        add("appAccountToken", appAccountToken)
        add("inAppOwnershipType", inAppOwnershipType)
        add("transactionReason", transactionReason)
        add("revocationDate", revocationDate)
        add("revocationReason", revocationReason)
        add("revocationType", revocationType)
        add("revocationPercentage", revocationPercentage)
        add("signedDate", signedDate)
        return text + ")"
    }
}
