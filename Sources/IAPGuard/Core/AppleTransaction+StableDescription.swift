extension AppleTransaction {
    /// `String(describing: self)` — the text ``AppleSighting/sightingID`` hashes, so stored sighting ids do
    /// not change — built without reflection, which took most of the store's write time. A test pins
    /// the equality; a new stored property must be added here in declaration order. `appTransactionID` and the
    /// purchase terms declared after it (offer, billing plan, Advanced Commerce, unknown fields) are
    /// deliberately left out (the payload hash already tells such copies apart), so ids stored before they
    /// were read do not change; so is the derived ``upgradeRevocationType`` label.
    var stableDescription: String {
        var bytes: [UInt8] = []
        appendStableDescription(to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the UTF-8 bytes of ``stableDescription`` to `bytes`: the sighting id is hashed from bytes
    /// written once into one buffer, not from strings concatenated field by field.
    func appendStableDescription(to bytes: inout [UInt8]) {
        bytes.append(contentsOf: "AppleTransaction(transactionID: ".utf8)
        Self.appendDebugDescription(of: transactionID, to: &bytes)
        func add(_ name: StaticString, _ value: String?) {
            bytes.append(contentsOf: ", ".utf8)
            bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            if let value {
                bytes.append(contentsOf: ": Optional(".utf8)
                Self.appendDebugDescription(of: value, to: &bytes)
                bytes.append(UInt8(ascii: ")"))
            } else {
                bytes.append(contentsOf: ": nil".utf8)
            }
        }
        func add(_ name: StaticString, _ value: Int64?) {
            bytes.append(contentsOf: ", ".utf8)
            bytes.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            if let value {
                bytes.append(contentsOf: ": Optional(".utf8)
                bytes.append(contentsOf: String(value).utf8)
                bytes.append(UInt8(ascii: ")"))
            } else {
                bytes.append(contentsOf: ": nil".utf8)
            }
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
        // The upgrade label is iapguard's reading, not Apple's data: left out so ids stay as they were.
        add("revocationType", revocationType == Self.upgradeRevocationType ? nil : revocationType)
        add("revocationPercentage", revocationPercentage)
        add("signedDate", signedDate)
        bytes.append(UInt8(ascii: ")"))
    }

    /// Appends `value.debugDescription`: the text in double quotes, as it is when every byte is printable
    /// ASCII that Swift does not escape (`"`, `'` and `\` are escaped), else through the escaping pass.
    private static func appendDebugDescription(of value: String, to bytes: inout [UInt8]) {
        let plain = value.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x27 && $0 != 0x5C }
        if plain {
            bytes.append(UInt8(ascii: "\""))
            bytes.append(contentsOf: value.utf8)
            bytes.append(UInt8(ascii: "\""))
        } else {
            bytes.append(contentsOf: value.debugDescription.utf8)
        }
    }
}
