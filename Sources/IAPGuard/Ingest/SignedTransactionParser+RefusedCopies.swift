import Foundation

extension SignedTransactionParser {
    /// The failed sightings a refused line still yields, so that rules and the lookup see that a tampered copy
    /// of a transaction arrived (IAP-020 rates its credit forged, not unconfirmed). Call it for a line
    /// ``parse(_:payloadHash:location:)`` refused; the line stays quarantined as well.
    ///
    /// One copy per transaction id the payload names (a payload naming two ids, one for each kind of parser,
    /// is a copy of both). Empty when the signed part is not what was refused (only the wrapper's metadata
    /// was), when the wrapper names two signed payloads, or when no id can be read: a line cut short, a
    /// payload that is not a whole JSON object. A copy is `failed` with reason `bad-format` and the refusal
    /// as detail, and carries only the id and the wrapper's metadata: nothing else a refused payload claims
    /// is taken as said.
    public func refusedCopies(of text: String, payloadHash: String, location: String) -> [AppleSighting] {
        let trimmed = TextTrim.whitespaces(text)
        var compact = trimmed
        var userID: String?
        var orderID: String?
        var receivedAt: Int64?
        if trimmed.utf8.first == UInt8(ascii: "{") {
            guard let object = try? JSONObject.parse(trimmed.utf8, rejectingDuplicateKeys: true),
                let signed = try? object.strictString("signedTransactionInfo")
            else { return [] }
            compact = signed
            // The metadata is kept where it reads; a bad field of it does not hide the copy.
            userID = try? object.string("user_id")
            orderID = try? object.string("order_id")
            receivedAt = try? object.time("received_at")
        }
        var copies = refusedCopies(
            ofSignedPart: compact, sourceKind: .jws, payloadHash: payloadHash, location: location)
        for index in copies.indices {
            copies[index].submittedByUserID = userID
            copies[index].submittedOrderID = orderID
            copies[index].receivedAt = receivedAt
        }
        return copies
    }

    /// The failed sightings of the signed transaction `compact` (a compact JWS that arrived as `sourceKind`) when
    /// it is refused, as ``refusedCopies(of:payloadHash:location:)`` describes: empty when `compact` is not
    /// refused or names no transaction id it can read. `field` names where it sat (a notification's
    /// `data.signedTransactionInfo`) in the detail.
    func refusedCopies(
        ofSignedPart compact: String, sourceKind: AppleSighting.SourceKind, payloadHash: String, location: String,
        field: String? = nil
    ) -> [AppleSighting] {
        guard let refusal = refusal(of: compact) else { return [] }
        let ids = Self.transactionIDs(inPayloadOf: compact)
        guard !ids.isEmpty else { return [] }
        let outcome = VerificationOutcome.failed(
            .badFormat, "refused and quarantined: \(field.map { "\($0): " } ?? "")\(refusal)")
        let receiptKey = Hashing.sha256Hex(compact.trimmingCharacters(in: .whitespacesAndNewlines))
        return ids.map { id in
            var sighting = AppleSighting(
                transaction: AppleTransaction(transactionID: id), sourceKind: sourceKind, sourceName: sourceName,
                sourceRef: location, payloadHash: payloadHash, verification: outcome)
            sighting.receiptKey = receiptKey
            if !TextTrim.isASCIIDigits(id) { sighting.anomalies.append("non-numeric-id") }
            return sighting
        }
    }

    /// Why the signed part `compact` is refused, or `nil` when it is not (it is a JWS meeting Apple's schema).
    /// A payload refused for Apple's schema has a signature that can still be checked: the detail says how
    /// that went, so a schema Apple changed can be told from a forgery.
    func refusal(of compact: String) -> String? {
        let jws: CompactJWS
        do {
            jws = try CompactJWS(compact)
        } catch let error as CompactJWS.FormatError {
            return error.message
        } catch {
            return "\(error)"
        }
        do {
            _ = try Self.transaction(from: jws.payloadObject)
            return nil
        } catch {
            let check = verifier.verifyTransaction(jws)
            let signature =
                check.status == .verified
                ? "the signature and certificate chain verify"
                : "the signature check failed as well (\(check.reason ?? "failed"))"
            return "\(error); \(signature)"
        }
    }

    /// The transaction ids a complete payload names, in order, each once: every top-level `transactionId`
    /// that is text, or a whole number (as a backend reading numbers would take it). Empty unless `compact`
    /// has its three parts and its payload decodes to a whole JSON object (duplicate keys allowed here).
    static func transactionIDs(inPayloadOf compact: String) -> [String] {
        let parts = compact.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }),
            let payload = Base64URL.decode(String(decoding: parts[1], as: UTF8.self)),
            let document = try? JSONDocument.parse(Array(payload), options: .foundationCompatible),
            document.kind(0) == .object
        else { return [] }
        var ids: [String] = []
        for (key, value) in document.members(ofObject: 0) where document.string(at: key) == "transactionId" {
            let id: String
            switch document.kind(value) {
            case .string, .escapedString: id = document.string(at: value)
            case .integer: id = document.numberText(at: value)
            case .number where document.isIntegerLiteral(at: value): id = document.numberText(at: value)
            default: continue
            }
            if !id.isEmpty, !ids.contains(id) { ids.append(id) }
        }
        return ids
    }
}
