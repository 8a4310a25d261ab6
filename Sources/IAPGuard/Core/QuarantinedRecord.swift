/// A source record that could not be parsed: kept with the reason, never silently dropped.
public struct QuarantinedRecord: Sendable, Hashable {
    public var sourceName: String
    /// `file:line` (or `file:record N`, or the API call).
    public var location: String
    public var reason: String
    /// The start of the raw record (at most 4 KiB, invalid UTF-8 replaced).
    public var rawExcerpt: String
    public var rawHash: String

    /// What identifies a quarantined record within its source: where it is and what it held.
    public struct Key: Sendable, Hashable {
        public var location: String
        public var rawHash: String

        public init(location: String, rawHash: String) {
            self.location = location
            self.rawHash = rawHash
        }
    }

    public var key: Key { Key(location: location, rawHash: rawHash) }

    public init(sourceName: String, location: String, reason: String, rawExcerpt: String, rawHash: String) {
        self.sourceName = sourceName
        self.location = location
        self.reason = reason
        self.rawExcerpt = rawExcerpt
        self.rawHash = rawHash
    }
}
