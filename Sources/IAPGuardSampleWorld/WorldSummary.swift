/// What ``WorldGenerator/write(to:)`` produced: line counts per file and truth lines per pattern.
public struct WorldSummary: Sendable, Hashable, Codable {
    /// Regular users simulated (accomplice/victim accounts of injected patterns come on top).
    public var users: Int
    /// Apple purchases made (initial purchases and renewals, including injected ones).
    public var purchases: Int
    /// Lines (records) per output file, keyed by the file's path relative to the world folder.
    public var fileLines: [String: Int]
    /// Truth lines per pattern.
    public var truthByPattern: [String: Int]
    /// Truth lines per rule id and expectation, keyed `IAP-001 hit` / `IAP-001 no-hit` / `IAP-008 evidence`.
    public var truthByRule: [String: Int]

    /// A summary from its parts.
    public init(
        users: Int, purchases: Int, fileLines: [String: Int], truthByPattern: [String: Int],
        truthByRule: [String: Int]
    ) {
        self.users = users
        self.purchases = purchases
        self.fileLines = fileLines
        self.truthByPattern = truthByPattern
        self.truthByRule = truthByRule
    }

    /// A human-readable multi-line report.
    public var description: String {
        var lines = ["users: \(users)", "purchases: \(purchases)", "files:"]
        for key in fileLines.keys.sorted() { lines.append("  \(key): \(fileLines[key] ?? 0) lines") }
        lines.append("truth by rule:")
        for key in truthByRule.keys.sorted() { lines.append("  \(key): \(truthByRule[key] ?? 0)") }
        lines.append("truth by pattern:")
        for key in truthByPattern.keys.sorted() { lines.append("  \(key): \(truthByPattern[key] ?? 0)") }
        return lines.joined(separator: "\n")
    }
}
