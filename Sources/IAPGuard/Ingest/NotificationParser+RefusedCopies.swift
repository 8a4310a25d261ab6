import Foundation

extension NotificationParser {
    /// The failed sightings a notification line ``parse(_:payloadHash:location:)`` refused still yields when what
    /// was refused is its nested signed transaction (`data.signedTransactionInfo`: a duplicate key, a header
    /// defect, Apple's schema, a part that does not decode), so a tampered copy of a transaction is seen the same
    /// whether it came in the signed-transactions file or inside a notification (IAP-020 rates its credit
    /// forged; the lookup says forged). One copy per transaction id the nested payload names, `failed` with
    /// reason `bad-format`, `source_kind` `notification`, carrying only the id and the line's `received_at`.
    ///
    /// Empty when the notification itself cannot be read (its own JWS refused, a wrapper or `data` of another
    /// shape), when its nested transaction is fine (something else was refused), or when no id can be read. The
    /// line stays quarantined as well.
    public func refusedTransactionCopies(of object: JSONObject, payloadHash: String, location: String)
        -> [AppleSighting]
    {
        guard let signedPayload = try? object.strictString("signedPayload"),
            let notification = try? CompactJWS(signedPayload),
            let data = try? notification.payloadObject.object("data"),
            let nested = try? data.strictString("signedTransactionInfo")
        else { return [] }
        let receivedAt = try? object.time("received_at")
        let parser = SignedTransactionParser(sourceName: sourceName, verifier: verifier)
        var copies = parser.refusedCopies(
            ofSignedPart: nested, sourceKind: .notification, payloadHash: payloadHash, location: location,
            field: "data.signedTransactionInfo")
        for index in copies.indices { copies[index].receivedAt = receivedAt }
        return copies
    }
}
