import Foundation

/// A compact JWS (`header.payload.signature`) split and decoded, not yet verified.
///
/// Parsing only checks the shape: three base64url parts, a JSON object header and a JSON object payload.
/// Everything about trust is ``JWSVerifier``'s job.
public struct CompactJWS: Sendable {
    /// The original compact text.
    public let compact: String
    /// Decoded header JSON bytes.
    public let headerJSON: Data
    /// Decoded payload JSON bytes.
    public let payloadJSON: Data
    /// The raw signature bytes (for ES256: r || s, 64 bytes).
    public let signature: Data
    /// `alg` from the header, if present and a string.
    public let algorithm: String?
    /// The `x5c` certificates from the header, DER-decoded (standard base64 per RFC 7515), in order
    /// leaf, intermediate, root. Empty when absent.
    public let certificateChainDER: [Data]

    /// The bytes the signature covers: ASCII of `header.payload` as transmitted.
    public var signingInput: Data {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false)
        return Data((parts[0] + "." + parts[1]).utf8)
    }

    /// Why a compact JWS could not be split or decoded.
    public struct FormatError: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// Splits and decodes `compact`. Throws ``FormatError`` for anything that is not a well-formed JWS.
    public init(_ compact: String) throws {
        let trimmed = compact.trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = trimmed.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            throw FormatError(message: "compact JWS needs 3 dot-separated parts, found \(parts.count)")
        }
        guard !parts[0].isEmpty, !parts[1].isEmpty else {
            throw FormatError(message: "compact JWS has an empty header or payload")
        }
        guard let header = Base64URL.decode(parts[0]) else {
            throw FormatError(message: "JWS header is not base64url")
        }
        guard let payload = Base64URL.decode(parts[1]) else {
            throw FormatError(message: "JWS payload is not base64url")
        }
        guard let signature = Base64URL.decode(parts[2]) else {
            throw FormatError(message: "JWS signature is not base64url")
        }
        guard let headerObject = (try? JSONSerialization.jsonObject(with: header)) as? [String: Any] else {
            throw FormatError(message: "JWS header is not a JSON object")
        }
        guard (try? JSONSerialization.jsonObject(with: payload)) is [String: Any] else {
            throw FormatError(message: "JWS payload is not a JSON object")
        }
        var chain: [Data] = []
        if let x5c = headerObject["x5c"] {
            guard let list = x5c as? [Any] else {
                throw FormatError(message: "JWS header x5c is not an array")
            }
            for (index, item) in list.enumerated() {
                guard let text = item as? String, let der = Data(base64Encoded: text) else {
                    throw FormatError(message: "JWS header x5c[\(index)] is not base64 DER")
                }
                chain.append(der)
            }
        }
        self.compact = trimmed
        self.headerJSON = header
        self.payloadJSON = payload
        self.signature = signature
        self.algorithm = headerObject["alg"] as? String
        self.certificateChainDER = chain
    }
}
