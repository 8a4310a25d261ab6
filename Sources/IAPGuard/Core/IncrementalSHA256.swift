import Crypto
import Foundation

/// SHA-256 over data fed in pieces (file hashing without loading the file).
public struct IncrementalSHA256 {
    private var hasher = SHA256()
    public init() {}
    public mutating func update(_ data: Data) { hasher.update(data: data) }
    public func finalizeHex() -> String { hasher.finalize().hexString }
}
