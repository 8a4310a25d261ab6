/// A signed record refused before it could be stored (a duplicate key, a header defect, a payload outside
/// Apple's schema) whose transaction id could still be read: the line is quarantined with `reason`, and
/// `copies`, failed sightings of the ids it names, are stored beside it.
struct RefusedSignedRecord: Error, Sendable {
    /// The quarantine reason, as the parser worded the refusal.
    let reason: String
    /// The failed sightings (``SignedTransactionParser/refusedCopies(of:payloadHash:location:)``).
    let copies: [AppleSighting]
}
