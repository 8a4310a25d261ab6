extension NotificationParser {
    /// The members of `responseBodyV2DecodedPayload` Apple documents.
    static let documentedKeys: Set<String> = [
        "notificationType", "subtype", "notificationUUID", "data", "summary", "externalPurchaseToken", "appData",
        "version", "signedDate",
    ]

    /// The documented members of each nested object (`data`, `summary`, `appData`, `externalPurchaseToken`).
    static let documentedNestedKeys: [String: Set<String>] = [
        "data": [
            "appAppleId", "bundleId", "bundleVersion", "environment", "signedTransactionInfo", "signedRenewalInfo",
            "status", "consumptionRequestReason",
        ],
        "summary": [
            "requestIdentifier", "environment", "appAppleId", "bundleId", "productId", "storefrontCountryCodes",
            "failedCount", "succeededCount",
        ],
        "appData": ["appAppleId", "bundleId", "environment", "signedAppTransactionInfo"],
        "externalPurchaseToken": ["externalPurchaseId", "tokenCreationDate", "appAppleId", "bundleId"],
    ]

    /// The payload's members outside Apple's schema as one compact JSON object text (a nested object's are
    /// keyed `<object>.<name>`), or `nil` when there are none. Kept so a field Apple adds is never dropped.
    static func unknownFields(of payload: JSONObject) throws -> String? {
        var parts: [String] = []
        if let top = payload.unknownMembers(known: documentedKeys) { parts.append(String(top.dropFirst().dropLast())) }
        for (name, known) in documentedNestedKeys.sorted(by: { $0.key < $1.key }) {
            guard payload.has(name), let nested = try? payload.object(name),
                let text = nested.unknownMembers(known: known)
            else { continue }
            let object = try JSONObject.parse(text.utf8)
            for (key, value) in object.document.members(ofObject: object.index) {
                var out: [UInt8] = []
                JSONDocument.writeString("\(name).\(object.document.string(at: key))", to: &out)
                out.append(UInt8(ascii: ":"))
                JSONObject.writeText(object.document, value, to: &out)
                parts.append(String(decoding: out, as: UTF8.self))
            }
        }
        return parts.isEmpty ? nil : "{" + parts.joined(separator: ",") + "}"
    }
}
