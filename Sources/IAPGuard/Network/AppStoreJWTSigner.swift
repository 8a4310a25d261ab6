import Crypto
import Foundation

/// Makes the bearer token of App Store Server API requests: an ES256 JWT signed with the App Store Connect
/// API key, a fresh one per request.
///
/// Header `{"alg":"ES256","kid":<key id>,"typ":"JWT"}`; claims `iss` (issuer id), `iat`, `exp` (at most 20
/// minutes after `iat`, Apple's limit), `aud` `appstoreconnect-v1`, `bid` (the app's bundle id). The token
/// and the key are never logged; ``description`` shows only the key id.
public struct AppStoreJWTSigner: Sendable, CustomStringConvertible {
    /// Apple rejects tokens that live longer than this.
    public static let maximumLifetime: TimeInterval = 20 * 60
    public static let audience = "appstoreconnect-v1"

    public let issuerID: String
    public let keyID: String
    public let bundleID: String
    /// Token lifetime, seconds (clamped to ``maximumLifetime``).
    public let lifetime: TimeInterval
    // swift-crypto keys are not `Sendable`: keep the raw scalar.
    private let keyRaw: Data

    public init(
        issuerID: String, keyID: String, bundleID: String, privateKey: P256.Signing.PrivateKey,
        lifetime: TimeInterval = 5 * 60
    ) {
        self.issuerID = issuerID
        self.keyID = keyID
        self.bundleID = bundleID
        self.lifetime = min(max(1, lifetime), Self.maximumLifetime)
        self.keyRaw = privateKey.rawRepresentation
    }

    public var description: String { "AppStoreJWTSigner(kid: \(keyID), bid: \(bundleID))" }

    /// The signed token (`header.claims.signature`, base64url, raw r‖s signature) issued at `now`.
    public func token(now: Date = Date()) throws -> String {
        let issuedAt = Int64(now.timeIntervalSince1970)
        let header: [String: Any] = ["alg": "ES256", "kid": keyID, "typ": "JWT"]
        let claims: [String: Any] = [
            "iss": issuerID, "iat": issuedAt, "exp": issuedAt + Int64(lifetime), "aud": Self.audience,
            "bid": bundleID,
        ]
        let headerData = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        let claimsData = try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])
        let signingInput = Base64URL.encode(headerData) + "." + Base64URL.encode(claimsData)
        let key = try P256.Signing.PrivateKey(rawRepresentation: keyRaw)
        let signature = try key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }
}
