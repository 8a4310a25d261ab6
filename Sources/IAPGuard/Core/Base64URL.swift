import Foundation

/// Base64url (RFC 4648 §5) without padding, as JWS uses it.
public enum Base64URL {
    /// Decodes base64url text (padding optional). Returns `nil` on any character outside the alphabet.
    public static func decode<S: StringProtocol>(_ text: S) -> Data? {
        var s = String(text)
        // Reject standard-base64 characters and whitespace: JWS parts are strictly base64url.
        for u in s.utf8 {
            switch u {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "="):
                continue
            default:
                return nil
            }
        }
        s = s.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let remainder = s.utf8.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { s += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: s)
    }

    /// Encodes bytes as base64url without padding.
    public static func encode(_ data: Data) -> String {
        var s = data.base64EncodedString()
        s = s.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while s.hasSuffix("=") { s.removeLast() }
        return s
    }
}
