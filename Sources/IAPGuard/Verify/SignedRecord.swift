import Foundation

/// One line of a signed-payload input file, as read by `iapguard verify`: a compact JWS, or a JSON
/// object carrying `signedPayload` (a notification V2 body) or `signedTransactionInfo`.
public struct SignedRecord: Sendable {
    /// What the line holds.
    public enum Content: Sendable {
        /// A parsed JWS to verify as `kind`.
        case jws(CompactJWS)
        /// The line is not a usable record; the outcome is `bad-format` with a detail.
        case invalid(VerificationOutcome)
    }

    /// The payload kind: from the JSON key (`signedPayload` → notification, `signedTransactionInfo` →
    /// transaction) or inferred from a bare JWS payload; `nil` when the line could not be read.
    public let kind: SignedPayloadKind?
    /// The record's content.
    public let content: Content

    /// Parses one line. Returns `nil` for a blank line.
    public init?(line: Substring) {
        // Foundation's trimming alone took most of `iapguard verify`'s time.
        let text = TextTrim.whitespacesAndNewlines(line)
        if text.isEmpty { return nil }
        if text.hasPrefix("{") {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] else {
                self.init(kind: nil, invalid: "line is neither a compact JWS nor a JSON object")
                return
            }
            if let payload = object["signedPayload"] as? String {
                self.init(compact: payload, kind: .notification)
            } else if let transaction = object["signedTransactionInfo"] as? String {
                self.init(compact: transaction, kind: .transaction)
            } else {
                self.init(kind: nil, invalid: "JSON object has no signedPayload or signedTransactionInfo string")
            }
            return
        }
        self.init(compact: text, kind: nil)
    }

    private init(compact: String, kind: SignedPayloadKind?) {
        do {
            let jws = try CompactJWS(compact)
            self.init(kind: kind ?? SignedPayloadKind(inferringFrom: jws), content: .jws(jws))
        } catch {
            self.init(kind: kind, invalid: "not a compact JWS: \(error)")
        }
    }

    private init(kind: SignedPayloadKind?, invalid detail: String) {
        self.init(kind: kind, content: .invalid(.failed(.badFormat, detail)))
    }

    private init(kind: SignedPayloadKind?, content: Content) {
        self.kind = kind
        self.content = content
    }
}
