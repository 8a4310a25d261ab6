extension NotificationParser {
    /// The members of `responseBodyV2DecodedPayload` Apple documents.
    static let documentedKeys = JSONKeySet([
        "notificationType", "subtype", "notificationUUID", "data", "summary", "externalPurchaseToken", "appData",
        "version", "signedDate",
    ])

    /// The documented members of each nested object (`data`, `summary`, `appData`, `externalPurchaseToken`).
    static let documentedNestedKeys: [(name: String, keys: JSONKeySet)] = [
        ("appData", JSONKeySet(["appAppleId", "bundleId", "environment", "signedAppTransactionInfo"])),
        (
            "data",
            JSONKeySet([
                "appAppleId", "bundleId", "bundleVersion", "environment", "signedTransactionInfo", "signedRenewalInfo",
                "status", "consumptionRequestReason",
            ])
        ),
        ("externalPurchaseToken", JSONKeySet(["externalPurchaseId", "tokenCreationDate", "appAppleId", "bundleId"])),
        (
            "summary",
            JSONKeySet([
                "requestIdentifier", "environment", "appAppleId", "bundleId", "productId", "storefrontCountryCodes",
                "failedCount", "succeededCount",
            ])
        ),
    ]

    /// The payload's members outside Apple's schema as one compact JSON object text (a nested object's are
    /// keyed `<object>.<name>`), or `nil` when there are none. Kept so a field Apple adds is never dropped.
    static func unknownFields(of payload: JSONObject) throws -> String? {
        var out: [UInt8] = []
        func add(_ name: String, _ document: JSONDocument, _ value: Int) {
            out.append(out.isEmpty ? UInt8(ascii: "{") : UInt8(ascii: ","))
            JSONDocument.writeString(name, to: &out)
            out.append(UInt8(ascii: ":"))
            JSONObject.writeText(document, value, to: &out)
        }
        let document = payload.document
        for (key, value) in document.members(ofObject: payload.index, notIn: documentedKeys) {
            add(document.string(at: key), document, value)
        }
        for (name, known) in documentedNestedKeys {
            guard let nested = try payload.object(name) else { continue }
            for (key, value) in document.members(ofObject: nested.index, notIn: known) {
                add("\(name).\(document.string(at: key))", document, value)
            }
        }
        guard !out.isEmpty else { return nil }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }
}
