/// A source record that could not be parsed: kept with the reason, never silently dropped.
public struct QuarantinedRecord: Sendable, Hashable {
    public var sourceName: String
    /// `file:line` (or `file:record N`, or the API call).
    public var location: String
    public var reason: String
    /// The start of the raw record (at most 4 KiB, invalid UTF-8 replaced).
    public var rawExcerpt: String
    public var rawHash: String

    public init(sourceName: String, location: String, reason: String, rawExcerpt: String, rawHash: String) {
        self.sourceName = sourceName
        self.location = location
        self.reason = reason
        self.rawExcerpt = rawExcerpt
        self.rawHash = rawHash
    }
}
