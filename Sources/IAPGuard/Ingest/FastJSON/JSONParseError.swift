/// Why ``JSONDocument/parse(_:options:)`` rejected its input: what is wrong and at which byte.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong (`unexpected character 'x'`, `lone surrogate \udc00 in a string`, …).
    public let message: String
    /// Zero-based byte offset in the input where the problem was found.
    public let offset: Int
    /// Whether the problem is a byte sequence that is not UTF-8 (the caller may word this one apart).
    public let isInvalidUTF8: Bool
    /// Whether the problem is a key given twice in one object (only with
    /// ``JSONDocument/Options/rejectDuplicateKeys``).
    public let isDuplicateKey: Bool

    public init(_ message: String, offset: Int, isInvalidUTF8: Bool = false, isDuplicateKey: Bool = false) {
        self.message = message
        self.offset = offset
        self.isInvalidUTF8 = isInvalidUTF8
        self.isDuplicateKey = isDuplicateKey
    }

    public var description: String { "\(message) at byte \(offset)" }
}
