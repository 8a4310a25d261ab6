import Foundation
import Logging

/// Plugs Apple's Look Up Order ID (``AppStoreOrderLookup``) into the support lookup's ``AppleOrderLookup``
/// seam. The client is built on first use, so a lookup by any other kind of id never reads the App Store
/// key, and a missing or unreadable key only fails the Apple-order part of a lookup (reported as a note).
public struct AppStoreOrderLookupAdapter: AppleOrderLookup {
    let config: Config
    let verifier: any AppleRecordVerifier
    let logger: Logger

    /// An adapter for `config`'s first `app_store_api` source, or `nil` when none is configured.
    public init?(config: Config, verifier: any AppleRecordVerifier, logger: Logger) {
        guard !config.appStoreAPI.isEmpty else { return nil }
        self.config = config
        self.verifier = verifier
        self.logger = logger
    }

    public func lookUpOrderID(_ appleOrderID: String) throws -> AppleOrderLookupResult {
        let lookup = try AppStoreOrderLookup(config: config, verifier: verifier, logger: logger)
        let answer = try lookup.verifiedTransactionIDs(forOrderID: appleOrderID)
        if answer.unverified > 0 {
            logger.warning(
                "Look Up Order ID returned signed transactions that do not verify",
                metadata: ["count": "\(answer.unverified)"])
        }
        return AppleOrderLookupResult(status: answer.status, transactionIDs: answer.transactionIDs)
    }
}
