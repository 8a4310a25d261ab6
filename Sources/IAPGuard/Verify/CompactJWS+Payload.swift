import Foundation

extension CompactJWS {
    /// The payload object, parsed once by the initialiser (errors name fields as `JSONObject` does).
    public var payloadObject: JSONObject {
        JSONObject(document: payloadDocument, index: 0, path: "")
    }

    /// The payload as read by ``FastJSONValue`` (for ``PayloadClaims``' fast path), or `nil` when that
    /// subset parser is not sure and `JSONDecoder` must decide — the same rule as before, now applied
    /// when the claims are read rather than on every decode.
    var payloadValue: FastJSONValue? {
        guard let value = FastJSONValue.parse(payloadJSON), value.objectValue != nil else { return nil }
        return value
    }
}
