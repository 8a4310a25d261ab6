/// A pattern injected into one user's history: fraud or a server bug the rules must catch, or a benign
/// look-alike they must leave alone. Scenarios are dealt to users by index (see ``WorldSchedule``).
enum WorldScenario: String, CaseIterable, Sendable {
    // Fraud and bugs (expect hit).
    case replayedReceipt = "replayed-receipt"
    case sharedTransaction = "shared-transaction"
    case receiptSharing = "receipt-sharing"
    case unknownBundle = "unknown-bundle"
    case crossAppRedemption = "cross-app-redemption"
    case productNotInCatalog = "product-not-in-catalog"
    case forgedReceipt = "forged-receipt"
    case currencyArbitrage = "currency-arbitrage"
    case storefrontHopping = "storefront-hopping"
    case displayedPriceMismatch = "displayed-price-mismatch"
    case creditToOtherUser = "credit-to-other-user"
    case tokenOwnerMismatch = "token-owner-mismatch"
    case tokenMultiAccount = "token-multi-account"
    case missingCredit = "missing-credit"
    case refundedStillCredited = "refunded-still-credited"
    case refundAbuse = "refund-abuse"
    case sandboxCredited = "sandbox-credited"
    case productMismatch = "product-mismatch"
    case quantityMismatch = "quantity-mismatch"
    case unconfirmedCredit = "unconfirmed-credit"
    // Benign look-alikes (expect no-hit).
    case familySharing = "family-sharing"
    case subscriptionRenewals = "subscription-renewals"
    case testerSandbox = "tester-sandbox"
    case traveller = "traveller"
    case movedCountry = "moved-country"
    case refundClawedBack = "refund-clawed-back"
    case rolledBackRetry = "rolled-back-retry"
    case restoreNewDevice = "restore-new-device"
    case gracePeriodPending = "grace-period-pending"
    case refundReversed = "refund-reversed"
    case nativeCheapStorefront = "native-cheap-storefront"
    case forgedJWSBlocked = "forged-jws-blocked"
    case foreignGenuineRefused = "foreign-genuine-refused"
    case cheapResidentTraveller = "cheap-resident-traveller"
    case sandboxStorefrontTester = "sandbox-storefront-tester"
    case singleLargeRefund = "single-large-refund"
    case familyRevocations = "family-revocations"
    // Appended last so the scenarios dealt before them keep their users.
    case appleAccountFarm = "apple-account-farm"
    case handedOverDevice = "handed-over-device"
    case subscriptionUpgrade = "subscription-upgrade"
    case familySharedSubscription = "family-shared-subscription"
    case subscriptionCreditedOnce = "subscription-credited-once"
    case subscriptionMovedAccount = "subscription-moved-account"
    case proratedRefundKeptShare = "prorated-refund-kept-share"
    case gracePeriodDaysCredited = "grace-period-days-credited"
    case refundFarmAccounts = "refund-farm-accounts"
    case movedOutOfCheapCountry = "moved-out-of-cheap-country"
    case firstEntryCredited = "first-entry-credited"
    case unpaidOrderCredited = "unpaid-order-credited"
    case failedOrderRetried = "failed-order-retried"
    case stalePriceList = "stale-price-list"
    case expiryClockSkew = "expiry-clock-skew"
    case bonusReplayed = "bonus-replayed"
    case forgottenSubscriptionRefunds = "forgotten-subscription-refunds"

    /// Scenarios that need the user's home storefront to be a full-price one.
    var needsFullPriceHome: Bool {
        switch self {
        case .currencyArbitrage, .storefrontHopping, .traveller, .movedCountry, .refundedStillCredited,
            .refundAbuse, .refundClawedBack, .refundReversed, .displayedPriceMismatch:
            return true
        default: return false
        }
    }
}
