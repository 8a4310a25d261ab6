/// The App Store environment a transaction or notification belongs to, spelled as Apple spells it.
public enum AppleEnvironment: String, Sendable, Codable, CaseIterable, Hashable {
    case production = "Production"
    case sandbox = "Sandbox"
    /// StoreKit testing in Xcode: signed locally, never by Apple.
    case xcode = "Xcode"
    /// Local StoreKit testing: never signed by Apple.
    case localTesting = "LocalTesting"

    /// Parses Apple's spelling, tolerating the legacy lower-case/upper-case forms seen in
    /// `verifyReceipt` responses (`"Sandbox"`, `"Production"`, `"PRODUCTION"`).
    public init?(appleValue: String) {
        switch appleValue.lowercased() {
        case "production", "prod": self = .production
        case "sandbox": self = .sandbox
        case "xcode": self = .xcode
        case "localtesting", "local_testing": self = .localTesting
        default: return nil
        }
    }

    /// Whether Apple's servers sign payloads of this environment (Xcode and LocalTesting are signed locally).
    public var isSignedByApple: Bool { self == .production || self == .sandbox }
}
