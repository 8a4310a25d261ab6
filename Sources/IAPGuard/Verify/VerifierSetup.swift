import Foundation

/// What `iapguard verify` trusts and accepts: its command-line options, with the defaults taken from a
/// config file when one is given.
///
/// - Roots: the `--trust` certificates when any are given; else the config's (Apple Root CA - G3 unless
///   `trust_apple_root: false`, plus its `trust:` files); else Apple Root CA - G3 alone.
/// - Apps: the `--bundle-id`s when any are given (each with the `--environment`s, Production by default,
///   and `--app-apple-id`); else the config's apps, each with its own environments and Apple ID — or with the
///   `--environment`s instead when those are given.
public struct VerifierSetup: Sendable {
    /// The trusted roots (DER).
    public var trustedRootsDER: [Data]
    /// The accepted apps and environments.
    public var policy: VerificationPolicy

    /// Why the options and the config do not make a verifier.
    public struct SetupError: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// Resolves the options against `config`. `environments` is `nil` when none was given.
    /// Throws ``SetupError`` when no app is given at all, or `--app-apple-id` has no single bundle ID, and
    /// `ConfigError` when a configured `trust:` file cannot be read.
    public init(
        config: Config?, trustedRootsDER explicitRoots: [Data], bundleIDs: [String],
        environments: Set<AppleEnvironment>?, appAppleID: Int64?
    ) throws {
        if !explicitRoots.isEmpty {
            trustedRootsDER = explicitRoots
        } else if let config {
            trustedRootsDER = try JWSVerifier.trustedRoots(for: config)
        } else {
            trustedRootsDER = [AppleRootCertificates.appleRootCAG3DER]
        }

        if !bundleIDs.isEmpty {
            if appAppleID != nil && bundleIDs.count != 1 {
                throw SetupError(message: "--app-apple-id needs exactly one --bundle-id")
            }
            let allowed = environments ?? [.production]
            policy = VerificationPolicy(
                apps: bundleIDs.map { .init(bundleID: $0, appAppleID: appAppleID, environments: allowed) })
        } else if let config {
            if appAppleID != nil {
                throw SetupError(message: "--app-apple-id needs exactly one --bundle-id")
            }
            var configured = VerificationPolicy(config: config)
            if let environments {
                for index in configured.apps.indices { configured.apps[index].environments = environments }
            }
            guard !configured.apps.isEmpty else {
                throw SetupError(message: "\(config.file.path) configures no apps; give --bundle-id")
            }
            policy = configured
        } else {
            throw SetupError(message: "give at least one --bundle-id, or --config")
        }
    }
}

extension VerificationPolicy {
    /// The configured apps with their Apple IDs and environments.
    public init(config: Config) {
        self.init(
            apps: config.apps.map {
                App(bundleID: $0.bundleID, appAppleID: $0.appAppleID, environments: Set($0.environments))
            })
    }
}
