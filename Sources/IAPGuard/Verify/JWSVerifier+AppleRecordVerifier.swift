import Foundation

extension JWSVerifier: AppleRecordVerifier {
    public func verifyTransaction(_ jws: CompactJWS) -> VerificationOutcome {
        verify(jws, as: .transaction)
    }

}

extension JWSVerifier {
    /// The verifier a config asks for: Apple Root CA G3 (unless `trust_apple_root: false`) plus the
    /// configured extra roots, and the configured apps with their environments.
    public static func make(for config: Config) throws -> JWSVerifier {
        var roots: [Data] = config.trustAppleRoot ? [AppleRootCertificates.appleRootCAG3DER] : []
        for file in config.trustedRootFiles {
            do {
                roots.append(try Data(contentsOf: file))
            } catch {
                throw ConfigError(file: config.file.path, key: "trust", message: "cannot read \(file.path)")
            }
        }
        let policy = VerificationPolicy(
            apps: config.apps.map {
                VerificationPolicy.App(
                    bundleID: $0.bundleID, appAppleID: $0.appAppleID, environments: Set($0.environments))
            })
        do {
            return try JWSVerifier(trustedRootsDER: roots, policy: policy)
        } catch {
            throw ConfigError(file: config.file.path, key: "trust", message: "\(error)")
        }
    }
}
