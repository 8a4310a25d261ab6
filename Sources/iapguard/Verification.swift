import Foundation
import IAPGuard

/// Builds the verifier the config asks for.
enum Verification {
    static func makeVerifier(for config: Config) throws -> any AppleRecordVerifier {
        try JWSVerifier.make(for: config)
    }
}
