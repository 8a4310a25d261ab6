import Foundation
import X509

extension JWSVerifier: AppleRecordVerifier {
    public func verifyTransaction(_ jws: CompactJWS) -> VerificationOutcome {
        verify(jws, as: .transaction)
    }

    public func verifyAppTransaction(_ jws: CompactJWS) -> VerificationOutcome {
        verify(jws, as: .appTransaction)
    }
}

extension JWSVerifier {
    /// The verifier a config asks for: Apple Root CA G3 (unless `trust_apple_root: false`) plus the
    /// configured extra roots, and the configured apps with their environments.
    public static func make(for config: Config) throws -> JWSVerifier {
        let roots = try trustedRoots(for: config)
        let policy = VerificationPolicy(config: config)
        do {
            return try JWSVerifier(trustedRootsDER: roots, policy: policy)
        } catch {
            throw ConfigError(file: config.file.path, key: "trust", message: "\(error)")
        }
    }

    /// The roots a config trusts: Apple Root CA G3 (unless `trust_apple_root: false`) and the `trust:` files.
    /// Throws `ConfigError` when a file cannot be read.
    public static func trustedRoots(for config: Config) throws -> [Data] {
        var roots: [Data] = config.trustAppleRoot ? [AppleRootCertificates.appleRootCAG3DER] : []
        for file in config.trustedRootFiles {
            let der: Data
            do {
                der = try Data(contentsOf: file)
            } catch {
                throw ConfigError(file: config.file.path, key: "trust", message: "cannot read \(file.path)")
            }
            // Checked one by one so the error names the file (and says so when it is PEM text).
            if der.starts(with: Array("-----BEGIN".utf8)) {
                throw ConfigError(
                    file: config.file.path, key: "trust",
                    message:
                        "\(file.path) is PEM text, not a DER certificate (convert it: openssl x509 -in \(file.lastPathComponent) -outform der)"
                )
            }
            do {
                _ = try Certificate(derEncoded: Array(der))
            } catch {
                throw ConfigError(
                    file: config.file.path, key: "trust",
                    message: "\(file.path) is not a DER certificate: \(CertificateChainEvaluator.describe(error))")
            }
            roots.append(der)
        }
        return roots
    }
}
