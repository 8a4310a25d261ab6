/// The answer to a support claim about one purchase (or one pair of purchases), in plain language, with the
/// accounts involved and what to do. Codes are stable and documented in `docs/support.md`.
public struct ClaimVerdict: Sendable, Hashable, Codable {
    /// The verdict codes.
    public enum Code: String, Sendable, Hashable, Codable, CaseIterable {
        /// Apple charged, the backend credited the paying account once. Nothing is owed.
        case paidAndCredited = "paid-and-credited"
        /// Paid, not credited yet, still within the grace period (default 24 h).
        case pendingCredit = "pending-credit"
        /// Paid (verified Production purchase), never credited after the grace period (漏单): grant it.
        case missingCredit = "missing-credit"
        /// Credited to a different account than the one that paid (误充).
        case misCredit = "mis-credit"
        /// One Apple charge credited several times (a replayed receipt or retried request): not charged twice.
        case replayed
        /// Two separate Apple charges for the same product by the same payer (the same Apple Account when both
        /// name one, else the same ordering account) within a short window.
        case chargedTwice = "charged-twice"
        /// Paid by and credited to the account that ordered it, but its app account token, which no account
        /// record names, is on orders of several accounts (IAP-013's token farm): the token cannot say who paid,
        /// so nothing is to be moved; the accounts sharing it are to be checked.
        case tokenShared = "token-shared"
        /// Paid in another app than the one it was redeemed in (an unknown bundle, or the order's app differs).
        case wrongApp = "wrong-app"
        /// Credited, but with another product or quantity than Apple charged for.
        case creditedWrongItem = "credited-wrong-item"
        /// Refunded or revoked by Apple and the credit was clawed back.
        case refundedClawedBack = "refunded-clawed-back"
        /// A subscription Apple ended early because the customer upgraded to a higher plan of the same group
        /// (revocation type UPGRADE: not a refund; Apple refunds the unused part itself), with no credit standing:
        /// nothing is owed on it, the entitlement continues on the new plan's transaction (its own verdict).
        case upgraded
        /// A subscription period Apple refunded or revoked after it had ended: its access was used up, and there
        /// is nothing left to claw back (IAP-015 does not report it; repeated refunds are IAP-016's).
        case refundedAfterPeriod = "refunded-after-period"
        /// Refunded or revoked by Apple but (some of) the credit still stands.
        case refundedStillCredited = "refunded-still-credited"
        /// A Sandbox/Xcode purchase: no money changed hands.
        case sandbox
        /// Forged or tampered data: every copy failed verification, or it carries a forgery marker.
        case forged
        /// Apple never confirmed the transaction (no copy seen, or none could be checked).
        case unverifiable
        /// A Family Sharing copy no one credited: access for a family member, not a payment; nothing is owed
        /// on it (the organiser's own purchase has its own verdict).
        case familyShared = "family-shared"
        /// A subscription renewal without a credit of its own, in an app whose backend credits each subscription
        /// once and keeps it by its expiry (IAP-014's `renewal_credit_share`): not a missing credit; the backend's
        /// subscription state says whether access continues.
        case subscriptionRenewal = "subscription-renewal"
        /// A transaction Apple charged nothing for (price 0: a free trial, a free offer code) that nothing
        /// credits yet: no money was paid, so nothing is owed (IAP-014 does not report it); the customer gets
        /// access once the app credits it.
        case freeNotCredited = "free-not-credited"
        /// A purchase of a product the catalog credits 0 units for (a tip jar, a donation) that nothing credits:
        /// the backend has nothing to write, so nothing is owed (IAP-014 does not report it).
        case nothingToCredit = "nothing-to-credit"
        /// An order with no Apple payment behind it and no credit.
        case orderNotPaid = "order-not-paid"
        /// Nothing matches the id.
        case notFound = "not-found"

        /// Whether the verdict means something is owed, wrong or suspicious.
        public var isProblem: Bool {
            switch self {
            case .paidAndCredited, .pendingCredit, .refundedClawedBack, .upgraded, .refundedAfterPeriod, .sandbox,
                .familyShared, .subscriptionRenewal, .freeNotCredited, .nothingToCredit, .orderNotPaid, .notFound:
                return false
            case .missingCredit, .misCredit, .replayed, .chargedTwice, .tokenShared, .wrongApp, .creditedWrongItem,
                .refundedStillCredited, .forged, .unverifiable:
                return true
            }
        }
    }

    public var code: Code
    /// One plain-language sentence.
    public var headline: String
    /// The transaction the verdict is about (`nil` for an order without a transaction).
    public var transactionID: String?
    /// Other transactions the verdict involves (the twin of a `charged-twice`).
    public var relatedTransactionIDs: [String] = []
    public var orderIDs: [String] = []
    /// The account that paid (the order's user, else the token's owner unless several accounts share the token,
    /// else the submitter).
    public var paidBy: String?
    /// Accounts holding a standing credit for it.
    public var creditedTo: [String] = []
    /// A benign pattern this resembles and why it is benign: `family-sharing`, `subscription-renewal`,
    /// `subscription-upgrade`, `restore`, `rolled-back-retry`, `refund-reversed`, `tester-sandbox`,
    /// `account-transfer`, `subscription-moved`.
    public var lookAlike: String?
    /// What support should do, when something is to be done.
    public var action: String?
    /// Supporting facts, one sentence each.
    public var details: [String] = []
    /// Active findings above informational that name this purchase although its verdict is no problem by
    /// itself (currency arbitrage, storefront hopping, receipt sharing, refund abuse, a Sandbox purchase
    /// credited to a customer), as `IAP-008 (high): summary`: support reads them before closing the claim.
    public var flaggedBy: [String] = []
    /// Whether something is owed, wrong or suspicious: the code says so, or an active finding names the
    /// purchase (``flaggedBy``).
    public var problem: Bool

    public init(code: Code, headline: String, transactionID: String?) {
        self.code = code
        self.headline = headline
        self.transactionID = transactionID
        problem = code.isProblem
    }

    /// Whether this verdict's code means a problem here: another app's purchase that nobody was credited for
    /// was refused, as it should be (the blocked attempt is IAP-004's informational finding).
    var codeIsProblem: Bool { code == .wrongApp ? !creditedTo.isEmpty : code.isProblem }

    /// Records the active findings that name this purchase when its code is no problem by itself, and sets
    /// ``problem`` from both.
    mutating func note(findings: [LookupFinding]) {
        flaggedBy = []
        if !codeIsProblem, let transactionID {
            flaggedBy = findings.filter {
                $0.isActive && $0.transactionID == transactionID && $0.levelRank > Finding.Level.informational.rank
            }
            .sorted { $0.levelRank != $1.levelRank ? $0.levelRank > $1.levelRank : $0.ruleID < $1.ruleID }
            .map { "\($0.ruleID) (\($0.level)): \($0.summary)" }
        }
        problem = codeIsProblem || !flaggedBy.isEmpty
    }
}
