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
        let digits: StaticString = "0123456789abcdef"
        return String(unsafeUninitializedCapacity: Self.byteCount * 2) { out in
            var index = 0
            for byte in self {
                out[index] = digits.utf8Start[Int(byte >> 4)]
                out[index + 1] = digits.utf8Start[Int(byte & 0x0F)]
                index += 2
            }
            return index
        }
    }
}
