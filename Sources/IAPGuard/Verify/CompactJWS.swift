import Foundation

/// A compact JWS (`header.payload.signature`) split and decoded, not yet verified.
///
/// Parsing checks the shape: three base64url parts, a JSON object header and a JSON object payload, neither
/// holding a key twice (a parser that keeps the first copy would read another record than the one
/// verified), and no `crit` header parameter (RFC 7515 §4.1.11: no extension is understood). Everything
/// about trust is ``JWSVerifier``'s job.
///
/// The work is done on the UTF-8 bytes: split at the dots, base64url-decode each part directly, parse the
/// header and the payload with iapguard's strict byte-level JSON parser (``JSONDocument``, which accepts
/// what `JSONSerialization` accepts on UTF-8 input) and decode the `x5c` certificates once. The parsed
/// payload is kept (``payloadObject``), so the ingest parsers do not parse it again.
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
    /// The payload, parsed (a JSON object: checked by the initialiser).
    let payloadDocument: JSONDocument
    /// UTF-8 length of `header.payload` in ``compact``.
    let signingInputCount: Int

    /// The bytes the signature covers: ASCII of `header.payload` as transmitted.
    public var signingInput: Data {
        var text = compact
        let count = signingInputCount
        return text.withUTF8 { Data(UnsafeBufferPointer(rebasing: $0.prefix(count))) }
    }

    /// Why a compact JWS could not be split or decoded.
    public struct FormatError: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// Splits and decodes `compact`. Throws ``FormatError`` for anything that is not a well-formed JWS.
    public init(_ compact: String) throws {
        var text = compact
        let fast = text.withUTF8 { bytes -> Result<Parts, FormatError>? in
            let trimmed = Self.trimASCIIWhitespace(bytes)
            guard !trimmed.contains(where: { $0 >= 0x80 }) else { return nil }
            return Self.parse(trimmed, isWhole: trimmed.count == bytes.count)
        }
        if let fast {
            try self.init(parts: fast.get(), original: compact)
            return
        }
        // Non-ASCII input: trim Unicode whitespace as before; what is left must be ASCII to be a JWS.
        let trimmed = compact.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.utf8.allSatisfy({ $0 < 0x80 }) else {
            throw Self.nonASCIIFailure(trimmed)
        }
        try self.init(trimmed)
    }

    private init(parts: Parts, original: String) {
        compact = parts.trimmedText ?? original
        headerJSON = parts.header
        payloadJSON = parts.payload
        signature = parts.signature
        algorithm = parts.algorithm
        certificateChainDER = parts.chain
        payloadDocument = parts.payloadDocument
        signingInputCount = parts.signingInputCount
    }

    /// What ``parse(_:)`` found.
    private struct Parts {
        /// The trimmed text when trimming removed something, else `nil` (the original is kept).
        var trimmedText: String?
        var header: Data
        var payload: Data
        var signature: Data
        var algorithm: String?
        var chain: [Data]
        var payloadDocument: JSONDocument
        var signingInputCount: Int
    }

    private static func isASCIIWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }

    private static func trimASCIIWhitespace(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
        var start = 0
        var end = bytes.count
        while start < end, isASCIIWhitespace(bytes[start]) { start += 1 }
        while end > start, isASCIIWhitespace(bytes[end - 1]) { end -= 1 }
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    /// The byte-level parse of ASCII text (already trimmed).
    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, isWhole: Bool) -> Result<Parts, FormatError> {
        var dots: [Int] = []
        for index in bytes.indices where bytes[index] == UInt8(ascii: ".") {
            dots.append(index)
            if dots.count > 2 { break }
        }
        guard dots.count == 2 else {
            let count = bytes.reduce(1) { $1 == UInt8(ascii: ".") ? $0 + 1 : $0 }
            return .failure(FormatError(message: "compact JWS needs 3 dot-separated parts, found \(count)"))
        }
        let headerPart = UnsafeBufferPointer(rebasing: bytes[0..<dots[0]])
        let payloadPart = UnsafeBufferPointer(rebasing: bytes[(dots[0] + 1)..<dots[1]])
        let signaturePart = UnsafeBufferPointer(rebasing: bytes[(dots[1] + 1)...])
        guard !headerPart.isEmpty, !payloadPart.isEmpty else {
            return .failure(FormatError(message: "compact JWS has an empty header or payload"))
        }
        let cached = JWSHeaderCache.shared.lookup(headerPart)
        guard let header = cached?.header ?? Base64Bytes.decodeURL(headerPart) else {
            return .failure(FormatError(message: "JWS header is not base64url"))
        }
        guard let payload = Base64Bytes.decodeURL(payloadPart) else {
            return .failure(FormatError(message: "JWS payload is not base64url"))
        }
        guard let signature = Base64Bytes.decodeURL(signaturePart) else {
            return .failure(FormatError(message: "JWS signature is not base64url"))
        }
        var headerFields = HeaderFields()
        if let cached {
            headerFields.algorithm = cached.algorithm
        } else {
            switch readHeader(header) {
            case .failure(let error): return .failure(error)
            case .success(let fields): headerFields = fields
            }
        }
        let payloadDocument: JSONDocument
        switch object(payload, part: "payload") {
        case .failure(let error): return .failure(error)
        case .success(let document): payloadDocument = document
        }
        var chain: [Data] = cached?.chain ?? []
        if cached == nil, let x5c = headerFields.x5c {
            guard let list = x5c else {
                return .failure(FormatError(message: "JWS header x5c is not an array"))
            }
            for (index, item) in list.enumerated() {
                guard var text = item,
                    let der = text.withUTF8({ Base64Bytes.decodeStandard($0) })
                else {
                    return .failure(FormatError(message: "JWS header x5c[\(index)] is not base64 DER"))
                }
                chain.append(der)
            }
        }
        if cached == nil {
            JWSHeaderCache.shared.store(
                .init(encoded: Array(headerPart), header: header, algorithm: headerFields.algorithm, chain: chain))
        }
        return .success(
            Parts(
                trimmedText: isWhole ? nil : String(decoding: bytes, as: UTF8.self), header: header,
                payload: payload, signature: signature, algorithm: headerFields.algorithm, chain: chain,
                payloadDocument: payloadDocument, signingInputCount: dots[1]))
    }

    /// `alg` and `x5c` of a header. `x5c`: `nil` when absent, `.some(nil)` when not an array; items are
    /// `nil` when not strings.
    private struct HeaderFields {
        var algorithm: String?
        var x5c: [String?]??
    }

    /// The decoded header or payload `bytes` as a JSON object read in the signed-data mode (a key given twice
    /// is named in the error).
    private static func object(_ bytes: Data, part: String) -> Result<JSONDocument, FormatError> {
        do {
            let document = try JSONDocument.parse(bytes, options: .signed)
            guard document.kind(0) == .object else {
                return .failure(FormatError(message: "JWS \(part) is not a JSON object"))
            }
            return .success(document)
        } catch {
            let message = error.isDuplicateKey ? "has a \(error.message)" : "is not a JSON object"
            return .failure(FormatError(message: "JWS \(part) \(message)"))
        }
    }

    private static func readHeader(_ header: Data) -> Result<HeaderFields, FormatError> {
        let document: JSONDocument
        switch object(header, part: "header") {
        case .failure(let error): return .failure(error)
        case .success(let parsed): document = parsed
        }
        if let crit = document.member("crit", inObject: 0) {
            let names =
                document.kind(crit) == .array
                ? document.items(ofArray: crit).map { item -> String in
                    let kind = document.kind(item)
                    return kind == .string || kind == .escapedString
                        ? String(document.string(at: item).prefix(40)) : "?"
                }.joined(separator: ", ") : "not a list"
            return .failure(
                FormatError(message: "JWS header has a crit parameter (\(names)); no header extension is understood"))
        }
        var fields = HeaderFields()
        if let alg = document.member("alg", inObject: 0),
            document.kind(alg) == .string || document.kind(alg) == .escapedString
        {
            fields.algorithm = document.string(at: alg)
        }
        if let x5c = document.member("x5c", inObject: 0) {
            if document.kind(x5c) == .array {
                fields.x5c = .some(
                    document.items(ofArray: x5c).map { item -> String? in
                        let kind = document.kind(item)
                        return kind == .string || kind == .escapedString ? document.string(at: item) : nil
                    })
            } else {
                fields.x5c = .some(nil)
            }
        }
        return .success(fields)
    }

    /// The error for trimmed text holding non-ASCII characters (never a JWS: base64url is ASCII), worded
    /// by the same checks in the same order as for ASCII text. The split is by `Character`.
    private static func nonASCIIFailure(_ trimmed: String) -> FormatError {
        let parts = trimmed.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3 else {
            return FormatError(message: "compact JWS needs 3 dot-separated parts, found \(parts.count)")
        }
        guard !parts[0].isEmpty, !parts[1].isEmpty else {
            return FormatError(message: "compact JWS has an empty header or payload")
        }
        for (part, name) in zip(parts, ["header", "payload", "signature"]) where Base64URL.decode(part) == nil {
            return FormatError(message: "JWS \(name) is not base64url")
        }
        return FormatError(message: "JWS is not ASCII text")
    }
}
