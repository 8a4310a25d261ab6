import Foundation
import Testing

@testable import IAPGuard

/// The quarantine tells which lines of the input files are bad as the files are now: a file read whole
/// again says it anew, one read from its old end adds to it.
@Suite struct QuarantineRereadTests {
    static func credit(_ id: String) -> String {
        #"{"credit_id":"\#(id)","transaction_id":"t-\#(id)","user_id":"u-1","units":1,"credited_at":1000}"#
    }

    static let source = ["{name: c, kind: credits, path: data/credits.jsonl}"]

    static func quarantined(_ world: IngestTestWorld, _ config: Config) throws -> [String] {
        try world.rows(config, "SELECT location FROM quarantine ORDER BY location").map { $0[0] ?? "" }
    }

    static func credits(_ world: IngestTestWorld, _ config: Config) throws -> [String] {
        try world.rows(config, "SELECT credit_id FROM credit ORDER BY credit_id").map { $0[0] ?? "" }
    }

    /// An export read while its last line was still being written: the cut line is quarantined by that run,
    /// and once the line is complete the next run stores it and no longer lists it as bad.
    @Test func aLastLineCutShortIsStoredOnceCompleteAndLeavesTheQuarantine() throws {
        let world = try IngestTestWorld()
        let lines = ["a", "b", "c", "d"].map(Self.credit)
        let whole = lines.joined(separator: "\n") + "\n"
        try world.write("credits.jsonl", String(whole.dropLast(30)))
        let config = try world.config(sources: Self.source)

        let first = try world.run(config)
        #expect(first.errors.isEmpty, "\(first.errors)")
        #expect(try Self.credits(world, config) == ["a", "b", "c"])
        #expect(try Self.quarantined(world, config) == ["credits.jsonl:4"])

        try world.write("credits.jsonl", whole)
        let second = try world.run(config)
        #expect(second.errors.isEmpty, "\(second.errors)")
        #expect(try Self.credits(world, config) == ["a", "b", "c", "d"])
        #expect(try Self.quarantined(world, config) == [])
    }

    /// A bad line stays quarantined while the file holds it, whether the file is read whole again or only
    /// its appended lines are; corrected, it leaves the quarantine at the next whole read.
    @Test func aBadLineStaysQuarantinedUntilTheFileNoLongerHoldsIt() throws {
        let world = try IngestTestWorld()
        let bad = #"{"credit_id":"x","user_id":"u-1","units":"many","credited_at":1000}"#
        let config = try world.config(sources: Self.source)
        try world.write("credits.jsonl", [Self.credit("a"), bad, Self.credit("b"), ""].joined(separator: "\n"))
        _ = try world.run(config)
        #expect(try Self.quarantined(world, config) == ["credits.jsonl:2"])

        // Rewritten (its first line changed): read whole again, the bad line still in it.
        try world.write(
            "credits.jsonl", [Self.credit("a2"), bad, Self.credit("b"), ""].joined(separator: "\n"))
        _ = try world.run(config)
        #expect(try Self.quarantined(world, config) == ["credits.jsonl:2"])

        // Grown: only the new line is read; the old bad line is still there and still listed.
        try world.write(
            "credits.jsonl", [Self.credit("a2"), bad, Self.credit("b"), Self.credit("c"), ""].joined(separator: "\n"))
        let grown = try world.run(config)
        #expect(grown.sources.first?.counts.records == 1)
        #expect(try Self.quarantined(world, config) == ["credits.jsonl:2"])

        // Corrected: read whole, nothing bad left.
        try world.write(
            "credits.jsonl",
            [Self.credit("a2"), Self.credit("x"), Self.credit("b"), Self.credit("c"), ""].joined(separator: "\n"))
        _ = try world.run(config)
        #expect(try Self.quarantined(world, config) == [])
        #expect(try Self.credits(world, config) == ["a", "a2", "b", "c", "x"])
    }
}
