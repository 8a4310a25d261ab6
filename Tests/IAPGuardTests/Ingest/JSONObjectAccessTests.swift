import Foundation
import Testing

@testable import IAPGuard

/// `JSONObject` on the byte-level parser: the same values and error wording as on `JSONSerialization`.
@Suite struct JSONObjectAccessTests {
    func object(_ text: String) throws -> JSONObject { try JSONObject.parse(Array(text.utf8)) }

    func message(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as RecordError {
            return error.message
        } catch {
            return "\(error)"
        }
    }

    @Test func numbersReadAsTextAndWholeNumbersAsBefore() throws {
        let o = try object(
            #"{"i":1596771003000,"s":" 42 ","f":1.5,"e":1e3,"big":12345678901234567890,"neg":-7,"x":"abc","t":true}"#)
        #expect(try o.string("i") == "1596771003000")
        #expect(try o.int64("s") == 42)
        #expect(try o.string("f") == "1.5")
        #expect(try o.int64("e") == 1000)
        #expect(try o.string("e") == "1000")
        #expect(try o.string("big") == "12345678901234567890")
        #expect(try o.int64("neg") == -7)
        #expect(message { _ = try o.int64("f") } == "f: expected a whole number, found 1.5")
        #expect(message { _ = try o.int64("big") } == "big: expected a whole number, found 12345678901234567890")
        #expect(message { _ = try o.int64("x") } == "x: expected a whole number, found \"abc\"")
        #expect(message { _ = try o.string("t") } == "t: expected text, found a boolean")
    }

    @Test func nullAndMissingKeysAreAbsent() throws {
        let o = try object(#"{"n":null,"s":"","o":{}}"#)
        #expect(!o.has("n") && !o.has("missing") && o.has("s") && o.has("o"))
        #expect(try o.string("n") == nil)
        #expect(try o.int64("s") == nil)
        #expect(try o.objects("n").isEmpty)
        #expect(message { _ = try o.requiredString("s") } == "s: missing")
    }

    @Test func nestedErrorsNameTheirPath() throws {
        let o = try object(#"{"receipt":{"in_app":[{"a":1},2]},"list":{}}"#)
        #expect(
            message { _ = try o.object("receipt")?.objects("in_app") }
                == "receipt.in_app[1]: expected an object, found a number")
        #expect(message { _ = try o.objects("list") } == "list: expected an array, found an object")
        #expect(message { _ = try o.time("list") } == "list: expected a whole number, found an object")
    }

    @Test func parseErrorsKeepTheirWording() {
        #expect(message { _ = try object("[1]") } == "expected a JSON object, found an array")
        #expect(message { _ = try object("true") } == "expected a JSON object, found a boolean")
        #expect(message { _ = try object(#"{"a":"#) }?.hasPrefix("malformed JSON (") == true)
        #expect(message { _ = try JSONObject.parse([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D]) } == "invalid UTF-8")
        // Invalid UTF-8 anywhere wins over an earlier syntax error, as before.
        #expect(message { _ = try JSONObject.parse([0x7B, 0x7B, 0x22, 0xC0, 0xAF]) } == "invalid UTF-8")
    }

    @Test func describedValuesRenderAsFoundationDid() throws {
        let o = try object(#"{"a":false,"b":true,"c":"x","d":3,"e":null,"f":1.5}"#)
        let foundation = try #require(
            try JSONSerialization.jsonObject(with: Data(#"{"a":false,"b":true,"c":"x","d":3,"e":null,"f":1.5}"#.utf8))
                as? [String: Any])
        for key in ["a", "b", "c", "d", "e", "f"] {
            #expect(o.describedValue(key) == foundation[key].map { "\($0)" }, "\(key)")
        }
        #expect(o.describedValue("missing") == nil)
    }

    @Test func anObjectBuiltFromFoundationValuesReadsTheSame() throws {
        let o = JSONObject([
            "signedPayload": "abc.def", "n": NSNumber(value: 5), "flag": NSNumber(value: true), "z": NSNull(),
        ])
        #expect(try o.string("signedPayload") == "abc.def")
        #expect(try o.int64("n") == 5)
        #expect(message { _ = try o.string("flag") } == "flag: expected text, found a boolean")
        #expect(!o.has("z"))
        #expect(o.values["signedPayload"] as? String == "abc.def")
    }

    @Test func whitespaceTrimmingMatchesCharacterSetWhitespacesButKeepsTheZeroWidthSpace() {
        let samples = [
            "", " ", "a", " a ", "\ta\t", "\u{A0}1\u{A0}", "\u{3000}x\u{2003}", "\n1\n", "\r2", "a b", " é ",
            "\u{1680}",
            "\u{202F}9\u{205F}", " z\u{2003}",
        ]
        for text in samples {
            #expect(
                TextTrim.whitespaces(text) == text.trimmingCharacters(in: .whitespaces), "\(Array(text.unicodeScalars))"
            )
        }
        // Every scalar of the BMP (Foundation's whitespace is all there): trimmed exactly when Foundation trims
        // it, but for the zero-width space, which is kept for the id checks to name.
        for value in 0..<0x1_0000 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let foundation = ("a" + String(Character(scalar))).trimmingCharacters(in: .whitespaces) == "a"
            if TextTrim.isWhitespace(scalar) != (foundation && value != 0x200B) {
                Issue.record("U+\(String(value, radix: 16))")
            }
        }
        #expect(TextTrim.whitespaces(" \u{200B}z\u{200B} ") == "\u{200B}z\u{200B}")
    }
}
