extension AppleTransaction {
    /// Exactly `String(describing: self)` — the text ``AppleSighting/sightingID`` hashes, so stored sighting
    /// ids do not change — built without reflection, which took most of the store's write time. A test pins
    /// the equality; a new stored property must be added here in declaration order. `appTransactionID` and the
    /// purchase terms declared after it (offer, billing plan, Advanced Commerce, unknown fields) are
    /// deliberately left out (the payload hash already tells such copies apart), so ids stored before they
    /// were read do not change.
    var stableDescription: String {
        var text = "AppleTransaction(transactionID: "
        text.reserveCapacity(700)
        Self.appendDebugDescription(of: transactionID, to: &text)
        func add(_ name: String, _ value: String?) {
            text += ", " + name + ": "
            if let value {
                text += "Optional("
                Self.appendDebugDescription(of: value, to: &text)
                text += ")"
            } else {
                text += "nil"
            }
        }
        func add(_ name: String, _ value: Int64?) {
            text += ", " + name + ": "
            if let value { text += "Optional(" + String(value) + ")" } else { text += "nil" }
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

    /// Appends `value.debugDescription`: the text in double quotes, as it is when every byte is printable
    /// ASCII that Swift does not escape (`"`, `'` and `\` are escaped), else through the escaping pass.
    private static func appendDebugDescription(of value: String, to text: inout String) {
        let plain = value.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x27 && $0 != 0x5C }
        if plain {
            text += "\""
            text += value
            text += "\""
        } else {
            text += value.debugDescription
        }
    }
}
