import Foundation
import Testing

@testable import IAPGuard

/// `JSONDocument` against `JSONSerialization`: same accept/reject and equal values on the malformed
/// corpus, on generated valid documents and on mutations of them (`JSONFoundationDifferential`).
@Suite struct JSONDifferentialTests {
    static let malformedFolder = Fixtures.repoRoot.appendingPathComponent("Tests/IAPGuardTests/Fixtures/malformed")

    /// Every line of every JSON Lines file of the malformed corpus, and the whole file too.
    static func corpusInputs() throws -> [(String, [UInt8])] {
        var inputs: [(String, [UInt8])] = []
        let files = FileManager.default.enumerator(at: malformedFolder, includingPropertiesForKeys: nil)
        while let url = files?.nextObject() as? URL {
            guard url.pathExtension == "jsonl" || url.pathExtension == "json" else { continue }
            let bytes = try Array(Data(contentsOf: url))
            inputs.append((url.lastPathComponent, bytes))
            for (number, line) in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
                inputs.append(("\(url.lastPathComponent):\(number + 1)", Array(line)))
            }
        }
        return inputs
    }

    @Test func theMalformedCorpusIsAcceptedAndRejectedExactlyAsJSONSerializationDoes() throws {
        let inputs = try Self.corpusInputs()
        #expect(inputs.count > 100)
        var rejected = 0
        for (name, bytes) in inputs {
            #expect(JSONFoundationDifferential.mismatch(bytes) == nil, "\(name)")
            if (try? JSONDocument.parse(bytes, options: .foundationCompatible)) == nil { rejected += 1 }
        }
        #expect(rejected > 20)
    }

    /// Found by the CI fuzz run: Foundation drops a U+FEFF that starts a string or follows an escape;
    /// RFC 8259 keeps it, and so does `JSONDocument` (a documented difference the differential allows).
    @Test func aByteOrderMarkInsideAStringIsKeptAndTheDifferentialAllowsFoundationsDrop() throws {
        let bytes = Array("[\"\\\"\u{FEFF}u18\", \"\u{FEFF}b\", \"a\u{FEFF}b\"]".utf8)
        let document = try JSONDocument.parse(bytes, options: .foundationCompatible)
        let items = document.items(ofArray: 0)
        #expect(items.map { document.string(at: $0) } == ["\"\u{FEFF}u18", "\u{FEFF}b", "a\u{FEFF}b"])
        #expect(JSONFoundationDifferential.mismatch(bytes) == nil)
        // A string that starts with the mark (no escape before it) is allowed the same way.
        #expect(JSONFoundationDifferential.mismatch(Array("[\"\u{FEFF}b\"]".utf8)) == nil)
    }

    @Test func generatedValidDocumentsAgreeWithJSONSerialization() {
        var generator = JSONTextGenerator(seed: 0x1A9_6A4D)
        for round in 0..<3000 {
            let bytes = generator.document()
            #expect(
                (try? JSONDocument.parse(bytes)) != nil, "round \(round): \(String(decoding: bytes, as: UTF8.self))")
            let mismatch = JSONFoundationDifferential.mismatch(bytes)
            #expect(mismatch == nil, "round \(round): \(mismatch ?? "") in \(String(decoding: bytes, as: UTF8.self))")
        }
    }

    @Test func mutatedDocumentsAgreeWithJSONSerialization() {
        var generator = JSONTextGenerator(seed: 0xF022)
        for round in 0..<6000 {
            let bytes = generator.mutate(generator.document())
            let mismatch = JSONFoundationDifferential.mismatch(bytes)
            #expect(mismatch == nil, "round \(round): \(mismatch ?? "") in \(bytes)")
        }
    }

    @Test func deepNestingAgreesAtAndAroundTheLimit() {
        for depth in [1, 2, 100, 511, 512, 513, 600] {
            for (open, close) in [("[", "]"), ("{\"k\":", "}")] {
                let text = String(repeating: open, count: depth) + "0" + String(repeating: close, count: depth)
                #expect(JSONFoundationDifferential.mismatch(Array(text.utf8)) == nil, "\(open) \(depth)")
            }
        }
    }

    @Test func everyUnicodeEscapeBoundaryAgrees() {
        for unit in [
            0x0000, 0x001F, 0x0020, 0x007F, 0x0080, 0x07FF, 0x0800, 0xD7FF, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xE000,
            0xFFFD, 0xFFFF,
        ] {
            let hex = String(unit, radix: 16)
            let escape = "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            for text in ["[\"\(escape)\"]", "[\"\(escape)\\udc00\"]", "[\"\\ud800\(escape)\"]"] {
                #expect(JSONFoundationDifferential.mismatch(Array(text.utf8)) == nil, "\(text)")
            }
        }
    }

    @Test func theFuzzSeedsAgreeWithJSONSerialization() throws {
        let folder = Fixtures.repoRoot.appendingPathComponent("Fuzz/corpus/FuzzJSONDocument")
        let seeds = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        #expect(seeds.count >= 5)
        for seed in seeds {
            #expect(
                JSONFoundationDifferential.mismatch(try Array(Data(contentsOf: seed))) == nil,
                "\(seed.lastPathComponent)")
        }
    }
}
