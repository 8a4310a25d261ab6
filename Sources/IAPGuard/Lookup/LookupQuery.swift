/// What support asked: one id, optionally pinned to a kind, and whether the customer consented to share
/// consumption data with Apple (needed before a consumption-information draft is written).
public struct LookupQuery: Sendable, Hashable {
    /// The longest id accepted (ids are short; anything longer is a paste mistake).
    public static let maxLength = 256

    /// The id, trimmed of surrounding whitespace.
    public var id: String
    /// The kind to try, or `nil` to try every kind.
    public var kind: IDKind?
    /// Whether support confirmed the customer consented to sharing consumption data with Apple.
    public var customerConsented: Bool

    /// Validates and normalises the id: trims whitespace; rejects an empty id, one longer than
    /// ``maxLength`` characters, or one with control characters.
    public init(id: String, kind: IDKind? = nil, customerConsented: Bool = false) throws {
        let trimmed = id.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { throw LookupError.usage("the id is empty") }
        guard trimmed.count <= Self.maxLength else {
            throw LookupError.usage("the id is longer than \(Self.maxLength) characters")
        }
        if trimmed.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw LookupError.usage("the id contains control characters")
        }
        self.id = trimmed
        self.kind = kind
        self.customerConsented = customerConsented
    }

    /// The kinds to try, in ``IDKind/priority`` order.
    public var kindsToTry: [IDKind] { kind.map { [$0] } ?? IDKind.priority }
}
