/// What the ingest stage asks of the verify stage for each signed payload.
///
/// The verify stage (``JWSVerifier``) implements it; ``UncheckedVerifier`` is the stand-in that marks
/// everything unverified (used when no verification is configured, e.g. `--no-verify` style dry checks).
public protocol AppleRecordVerifier: Sendable {
    /// Verifies a signed transaction (JWSTransactionDecodedPayload).
    func verifyTransaction(_ jws: CompactJWS) -> VerificationOutcome
    /// Verifies a notification and, on their own, its nested signed transaction and renewal info.
    func verifyNotification(_ jws: CompactJWS) -> NotificationVerification
    /// Verifies a signed app transaction (`JWSAppTransaction`, from Get App Transaction Info).
    func verifyAppTransaction(_ jws: CompactJWS) -> VerificationOutcome
}

extension AppleRecordVerifier {
    /// A verifier that cannot check app transactions leaves them unverified (never trusted).
    public func verifyAppTransaction(_ jws: CompactJWS) -> VerificationOutcome { .unverified }
}

/// Marks every signed record `unverified`: nothing unchecked is ever treated as verified.
public struct UncheckedVerifier: AppleRecordVerifier {
    public init() {}
    public func verifyTransaction(_ jws: CompactJWS) -> VerificationOutcome { .unverified }
    public func verifyNotification(_ jws: CompactJWS) -> NotificationVerification {
        NotificationVerification(outcome: .unverified, transaction: .unverified, renewal: .unverified)
    }
}
