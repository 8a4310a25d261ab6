/// One copy of an Apple transaction as seen in one source record, with where it came from and what
/// verification concluded. Every sighting is kept, so a forged or replayed copy of a real transaction id
/// is never merged away.
public struct AppleSighting: Sendable, Hashable {
    /// How the copy arrived.
    public enum SourceKind: String, Sendable, Hashable, Codable {
        /// A legacy `verifyReceipt` response stored by the backend.
        case receipt
        /// A JWS signed transaction.
        case jws
        /// The signed transaction nested in an App Store Server Notification V2.
        case notification
        /// An App Store Server API response.
        case api
    }

    public var transaction: AppleTransaction
    public var sourceKind: SourceKind
    /// The configured source's name.
    public var sourceName: String
    /// `file:line` or the API call.
    public var sourceRef: String
    /// SHA-256 (hex) of the exact source record bytes.
    public var payloadHash: String
    /// Identifies the receipt or signed payload a user submitted (for receipt-sharing checks).
    public var receiptKey: String?
    /// Legacy `verifyReceipt` `status`.
    public var receiptStatus: Int64?
    /// The backend's metadata wrapped around the record, when present.
    public var submittedByUserID: String?
    public var submittedOrderID: String?
    public var receivedAt: Int64?
    public var verification: VerificationOutcome
    /// Facts noticed while parsing that rules may use, comma-separated
    /// (`date-mismatch`, `expiry-far-future`, `product-outside-bundle`, `non-numeric-id`).
    public var anomalies: [String]

    public init(
        transaction: AppleTransaction, sourceKind: SourceKind, sourceName: String, sourceRef: String,
        payloadHash: String, verification: VerificationOutcome
    ) {
        self.transaction = transaction
        self.sourceKind = sourceKind
        self.sourceName = sourceName
        self.sourceRef = sourceRef
        self.payloadHash = payloadHash
        self.verification = verification
        self.anomalies = []
    }

    /// The stable identity of this sighting: the same record ingested twice yields the same id; two entries
    /// of one response that differ in content are two sightings.
    public var sightingID: String {
        cachedID.value ?? computedSightingID
    }

    /// The sighting id computed once, on a parse thread (``cacheSightingID()``), so the single writer
    /// does not hash it again. Set only when the sighting is complete; never part of equality.
    var cachedID = CachedSightingID()

    /// Computes the id now and keeps it. Call once the fields are final.
    mutating func cacheSightingID() {
        cachedID = CachedSightingID(value: computedSightingID)
    }

    /// SHA-256 of the source kind, payload hash, transaction id, submitter, order and the transaction's
    /// ``AppleTransaction/stableDescription``, joined by U+001F, written into one byte buffer.
    var computedSightingID: String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(1024)
        for part in [
            sourceKind.rawValue, payloadHash, transaction.transactionID, submittedByUserID ?? "",
            submittedOrderID ?? "",
        ] {
            bytes.append(contentsOf: part.utf8)
            bytes.append(0x1F)
        }
        transaction.appendStableDescription(to: &bytes)
        return bytes.withUnsafeBytes { Hashing.sha256Hex($0) }
    }
}

/// A memo of ``AppleSighting/sightingID``: equal to any other, so it never changes a sighting's equality.
struct CachedSightingID: Sendable, Hashable {
    var value: String?

    static func == (lhs: CachedSightingID, rhs: CachedSightingID) -> Bool { true }

    func hash(into hasher: inout Hasher) {}
}
