import Foundation
import Testing

@testable import IAPGuard

/// The undo images a run keeps of the findings it changes: written without `JSONSerialization` on the
/// common path, read back to the exact SQL values, whichever way they were written.
struct FindingRewindImageTests {
    static let columns = ["finding_id", "amount", "amount_ref", "evidence_json", "observed", "summary", "status"]

    static func randomText(_ random: inout some RandomNumberGenerator, asciiOnly: Bool) -> String {
        let ascii: [Character] = ["a", "Z", "0", " ", "\"", "\\", "/", "{", "}", ":", ",", "["]
        let other: [Character] = ["é", "\u{1}", "\n", "\t", "€", "😀", "\u{7F}"]
        let pool = asciiOnly ? ascii : ascii + other
        return String((0..<Int.random(in: 0...40, using: &random)).map { _ in pool.randomElement(using: &random)! })
    }

    static func randomValue(_ random: inout some RandomNumberGenerator, asciiOnly: Bool) -> SQLValue {
        switch Int.random(in: 0..<4, using: &random) {
        case 0: return .null
        case 1:
            return .integer(
                [Int64.min, Int64.max, 0, -1, Int64.random(in: -1_000_000...1_000_000, using: &random)].randomElement(
                    using: &random)!)
        case 2:
            return .real(
                [0.1, -2.5e-7, 1e20, 3.0, Double.random(in: -1e6...1e6, using: &random)].randomElement(using: &random)!)
        default: return .text(randomText(&random, asciiOnly: asciiOnly))
        }
    }

    @Test func imagesReadBackToTheSameValuesWhicheverWriterWroteThem() throws {
        var random = SystemRandomNumberGenerator()
        for round in 0..<500 {
            let asciiOnly = round % 2 == 0
            let row = Self.columns.map { _ in Self.randomValue(&random, asciiOnly: asciiOnly) }
            let image = FindingRewind.encode(row, columns: Self.columns)
            #expect(try FindingRewind.decode(image, columns: Self.columns) == row, "\(image)")
            let reference = FindingRewind.serializationEncode(row, columns: Self.columns)
            #expect(try FindingRewind.decode(reference, columns: Self.columns) == row, "\(row) \(reference)")
            if let fast = FindingRewind.fastEncode(row, columns: Self.columns) {
                // The same JSON value as the reference writer's.
                let a = try JSONSerialization.jsonObject(with: Data(fast.utf8)) as? NSDictionary
                let b = try JSONSerialization.jsonObject(with: Data(reference.utf8)) as? NSDictionary
                #expect(a == b, "\(fast) vs \(reference)")
            } else {
                #expect(!asciiOnly || row.contains { if case .real(let v) = $0 { !v.isFinite } else { false } })
            }
        }
    }

    @Test func textThatIsNotPrintableASCIIIsLeftToJSONSerialization() {
        #expect(FindingRewind.fastEncode([.text("café")], columns: ["summary"]) == nil)
        #expect(FindingRewind.fastEncode([.text("a\nb")], columns: ["summary"]) == nil)
        #expect(FindingRewind.fastEncode([.real(.infinity)], columns: ["amount"]) == nil)
        #expect(
            FindingRewind.fastEncode([.text(#"say "hi" \ bye"#), .integer(7), .null], columns: ["s", "b", "a"])
                == #"{"a":null,"b":{"i":7},"s":{"s":"say \"hi\" \\ bye"}}"#)
    }
}
