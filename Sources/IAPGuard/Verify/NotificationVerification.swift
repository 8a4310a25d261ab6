/// The result of ``JWSVerifier/verifyNotification(_:)``: the notification as a whole and each nested
/// signed payload on its own.
public struct NotificationVerification: Sendable, Hashable {
    /// The notification's overall outcome. Failed with the notification's own reason when its signature,
    /// chain or claims fail; otherwise failed with `nested-failed` when a nested payload fails.
    public var outcome: VerificationOutcome
    /// The outcome of `data.signedTransactionInfo`, or `nil` when the notification carries none.
    public var transaction: VerificationOutcome?
    /// The outcome of `data.signedRenewalInfo`, or `nil` when the notification carries none.
    public var renewal: VerificationOutcome?
    /// The outcome of `appData.signedAppTransactionInfo`, or `nil` when the notification carries none.
    public var appTransaction: VerificationOutcome?

    /// Creates a result.
    public init(
        outcome: VerificationOutcome, transaction: VerificationOutcome? = nil, renewal: VerificationOutcome? = nil,
        appTransaction: VerificationOutcome? = nil
    ) {
        self.outcome = outcome
        self.transaction = transaction
        self.renewal = renewal
        self.appTransaction = appTransaction
    }
}
