import Crypto
import Foundation
import Logging

/// Look Up Order ID for support: Apple's order id (from the customer's receipt e-mail, e.g. `MK5TTTVWJH`)
/// → the ids of the order's transactions, counting only signed transactions that **verify**.
///
/// It asks every app of the first `app_store_api` source (the JWT's `bid` is per app), each in its allowed
/// environments (Production first, Sandbox only if the app allows it), until Apple knows the order. It
/// writes nothing to the store. The lookup module's `AppleOrderLookup` seam can adapt it in a few lines.
public struct AppStoreOrderLookup: Sendable {
    /// Why a lookup cannot be made.
    public struct Unavailable: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// Apple's status (0 valid, 1 no such order) and the verified transaction ids.
    public struct Answer: Sendable, Hashable {
        public var status: Int
        public var transactionIDs: [String]
        /// Signed transactions Apple returned that did not verify (never reported as ids).
        public var unverified: Int
    }

    let clients: [AppStoreServerAPIClient]
    let verifier: any AppleRecordVerifier

    /// Builds the clients from the config's first `app_store_api` source, loading its key.
    public init(
        config: Config, verifier: any AppleRecordVerifier, logger: Logger,
        httpClient: any HTTPClient = URLSessionHTTPClient(),
        processEnvironment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        guard let source = config.appStoreAPI.first else {
            throw Unavailable(message: "no app_store_api source is configured")
        }
        let key = try AppStoreKeyFile.load(source.key, environment: processEnvironment)
        let http = ResilientHTTPClient(
            client: httpClient, policy: source.retry, timeout: source.timeoutSeconds,
            requestsPerSecond: source.requestsPerSecond, logger: logger)
        var clients: [AppStoreServerAPIClient] = []
        let bundles = source.bundleIDs.isEmpty ? config.apps.map(\.bundleID) : source.bundleIDs
        for app in config.apps where bundles.contains(app.bundleID) {
            for environment in [AppleEnvironment.production, .sandbox]
            where app.environments.contains(environment) && (source.environments ?? [environment]).contains(environment)
            {
                guard let base = source.baseURLs[environment] else { continue }
                let signer = AppStoreJWTSigner(
                    issuerID: source.issuerID, keyID: source.keyID, bundleID: app.bundleID, privateKey: key)
                clients.append(
                    AppStoreServerAPIClient(environment: environment, baseURL: base, signer: signer, http: http))
            }
        }
        self.clients = clients
        self.verifier = verifier
    }

    /// Looks the order up; throws ``AppStoreAPIError`` / ``NetworkCallError`` when Apple cannot be asked.
    public func verifiedTransactionIDs(forOrderID orderID: String) throws -> Answer {
        for client in clients {
            let result = try client.lookUpOrder(orderID: orderID)
            guard result.isValid else { continue }
            var ids: [String] = []
            var unverified = 0
            for signed in result.signedTransactions {
                guard let jws = try? CompactJWS(signed), verifier.verifyTransaction(jws).status == .verified,
                    let payload = try? JSONObject.parse(jws.payloadJSON),
                    let transaction = try? SignedTransactionParser.transaction(from: payload)
                else {
                    unverified += 1
                    continue
                }
                ids.append(transaction.transactionID)
            }
            return Answer(status: result.status, transactionIDs: ids, unverified: unverified)
        }
        return Answer(status: 1, transactionIDs: [], unverified: 0)
    }
}
