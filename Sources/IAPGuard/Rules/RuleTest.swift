import Foundation

/// An inline test of a rule: fixture rows per view in, expected findings out.
///
/// Expectations name findings by their entity-key columns (any subset of the rule's result columns);
/// `level` in a hit expectation also checks the finding's level, `reason` in an inconclusive expectation
/// checks that the reason contains that text. Unless `strict` is false, every unsuppressed hit must be
/// expected.
public struct RuleTest: Sendable, Hashable {
    /// One expected (or unexpected) finding, by result-column values compared as text.
    public struct Expectation: Sendable, Hashable {
        public var fields: [String: String]
        public var line: Int
        public init(fields: [String: String], line: Int = 0) {
            self.fields = fields
            self.line = line
        }
    }

    /// One fixture row for a view, in the view's column names.
    public struct FixtureRow: Sendable, Hashable {
        public var values: [String: SQLValue]
        public var line: Int
        public init(values: [String: SQLValue], line: Int = 0) {
            self.values = values
            self.line = line
        }
    }

    /// Fields of an expectation that are checks, not result-column matches.
    public static let checkFields: Set<String> = ["level", "reason"]
    /// `now` when a test does not give one: 2026-03-01T00:00:00Z.
    public static let defaultNow: Int64 = 1_772_323_200_000

    public var name: String
    public var now: Int64
    public var params: [String: SQLValue]
    /// View name → rows, in file order.
    public var given: [(view: String, rows: [FixtureRow])]
    public var hits: [Expectation]
    public var nonHits: [Expectation]
    public var inconclusive: [Expectation]
    public var suppressed: [Expectation]
    public var strict: Bool
    public var line: Int

    public init(
        name: String, now: Int64 = RuleTest.defaultNow, params: [String: SQLValue] = [:],
        given: [(view: String, rows: [FixtureRow])], hits: [Expectation] = [], nonHits: [Expectation] = [],
        inconclusive: [Expectation] = [], suppressed: [Expectation] = [], strict: Bool = true, line: Int = 0
    ) {
        self.name = name
        self.now = now
        self.params = params
        self.given = given
        self.hits = hits
        self.nonHits = nonHits
        self.inconclusive = inconclusive
        self.suppressed = suppressed
        self.strict = strict
        self.line = line
    }

    public static func == (lhs: RuleTest, rhs: RuleTest) -> Bool {
        lhs.name == rhs.name && lhs.now == rhs.now && lhs.params == rhs.params && lhs.line == rhs.line
            && lhs.given.map(\.view) == rhs.given.map(\.view) && lhs.given.map(\.rows) == rhs.given.map(\.rows)
            && lhs.hits == rhs.hits && lhs.nonHits == rhs.nonHits && lhs.inconclusive == rhs.inconclusive
            && lhs.suppressed == rhs.suppressed && lhs.strict == rhs.strict
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(line)
    }
}

extension RuleTest.Expectation {
    /// Whether a finding row satisfies the match part (check fields ignored).
    func matches(_ row: [String: SQLValue]) -> Bool {
        for (column, value) in fields where !RuleTest.checkFields.contains(column) {
            guard let actual = row[column]?.textValue, actual == value else { return false }
        }
        return true
    }

    /// The expectation as `column=value` text, for messages.
    var rendered: String {
        fields.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
    }
}
