import Crypto
import Foundation

/// SHA-256 helpers for stable ids and payload hashes.
public enum Hashing {
    /// Lower-case hex SHA-256 of `data`.
    public static func sha256Hex(_ data: Data) -> String {
        SHA256.hash(data: data).hexString
    }

    /// Lower-case hex SHA-256 of the UTF-8 bytes of `text`.
    public static func sha256Hex(_ text: String) -> String {
        sha256Hex(Data(text.utf8))
    }

    /// Lower-case hex SHA-256 of raw bytes.
    public static func sha256Hex(_ bytes: UnsafeRawBufferPointer) -> String {
        SHA256.hash(data: bytes).hexString
    }
}

extension Digest {
    /// The digest as lower-case hex.
    var hexString: String {
        var s = ""
        s.reserveCapacity(Self.byteCount * 2)
        for byte in self {
            s += String(byte, radix: 16).count == 1 ? "0" + String(byte, radix: 16) : String(byte, radix: 16)
        }
        return s
    }
}
