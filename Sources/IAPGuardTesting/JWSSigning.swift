import Foundation

/// Something that turns a JSON payload into a compact JWS the way Apple signs it
/// (`ES256`, `x5c` holding leaf, intermediate and root). The generator uses it with a test chain.
public protocol JWSSigning: Sendable {
    /// Signs `payload` (JSON bytes) and returns the compact serialisation `header.payload.signature`.
    func sign(payload: Data) throws -> String
}
