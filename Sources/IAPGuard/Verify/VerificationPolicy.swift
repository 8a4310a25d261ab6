/// Which apps a ``JWSVerifier`` accepts signed payloads for, and in which App Store environments.
///
/// A payload whose `bundleId` is not listed here fails with `wrong-bundle`; one whose `environment` is
/// not in its app's ``App/environments`` fails with `wrong-environment`. Xcode and LocalTesting are never
/// accepted, even when listed, because Apple never signs them.
public struct VerificationPolicy: Sendable, Hashable {
    /// One configured app.
    public struct App: Sendable, Hashable {
        /// The app's bundle identifier, compared exactly with the payload's `bundleId`.
        public var bundleID: String
        /// The app's Apple ID (`appAppleId`). When set, Production notifications must carry it.
        public var appAppleID: Int64?
        /// The environments whose payloads are accepted for this app. Production only by default.
        public var environments: Set<AppleEnvironment>

        /// Creates an app entry. Sandbox must be allowed explicitly.
        public init(bundleID: String, appAppleID: Int64? = nil, environments: Set<AppleEnvironment> = [.production]) {
            self.bundleID = bundleID
            self.appAppleID = appAppleID
            self.environments = environments
        }
    }

    /// The configured apps.
    public var apps: [App]

    /// Creates a policy for `apps`.
    public init(apps: [App]) {
        self.apps = apps
    }

    /// The configured app with exactly this bundle identifier, if any.
    public func app(bundleID: String) -> App? {
        apps.first { $0.bundleID == bundleID }
    }

    /// The union of all apps' environments (used for renewal info, which names no bundle).
    public var anyAppEnvironments: Set<AppleEnvironment> {
        apps.reduce(into: Set<AppleEnvironment>()) { $0.formUnion($1.environments) }
    }
}
