import Foundation
import Testing

@testable import IAPGuard

/// `JSONDocument`'s grammar, rule by rule (RFC 8259 plus the documented choices).
@Suite struct JSONGrammarTests {
    func accepts(_ text: String, _ options: JSONDocument.Options = .strict) -> Bool {
        (try? JSONDocument.parse(Array(text.utf8), options: options)) != nil
    }

    func accepts(bytes: [UInt8], _ options: JSONDocument.Options = .strict) -> Bool {
        (try? JSONDocument.parse(bytes, options: options)) != nil
    }

    func error(_ text: String) -> JSONParseError? {
        do {
            _ = try JSONDocument.parse(Array(text.utf8), options: .strict)
            return nil
        } catch {
            return error
        }
    }

    func first(_ text: String) throws -> Any {
        let value = try JSONDocument.parse(Array(text.utf8), options: .strict).foundationValue()
        return (value as? [Any])?.first ?? value
    }

    @Test func literalsAreLowerCaseTrueFalseNullOnly() {
        for good in ["true", "false", "null", "[true,false,null]"] { #expect(accepts(good), "\(good)") }
        for bad in ["True", "FALSE", "nul", "nulll", "NaN", "Infinity", "-Infinity", "undefined", "tru"] {
            #expect(!accepts(bad), "\(bad)")
        }
    }

    @Test func numbersFollowTheRFCGrammar() {
        for good in [
            "0", "-0", "1", "-1", "10", "0.5", "-0.5", "1e5", "1E5", "1e+5", "1e-5", "1.5e300", "0e0", "123.456e-7",
        ] {
            #expect(accepts(good), "\(good)")
        }
        for bad in [
            "01", "-01", "00", "+1", "1.", ".5", "-.5", "1e", "1e+", "1.e5", "-", "--1", "0x10", "1_000", "1;5",
        ] {
            #expect(!accepts("[\(bad)]"), "\(bad)")
        }
        #expect(error("[01]")?.message == "number with a leading zero")
    }

    @Test func numbersMustBeFiniteAsADoubleAndTinyOnesReadAsZero() throws {
        #expect(!accepts("1e400"))
        #expect(!accepts("-1e400"))
        #expect(!accepts(String(repeating: "9", count: 400)))
        #expect(accepts(String(repeating: "9", count: 300)))
        #expect((try first("[1e-400]") as? NSNumber)?.doubleValue == 0)
        #expect(error("[1e400]")?.message.contains("too large") == true)
    }

    @Test func integersKeepAllTheirDigitsUpToInt64() throws {
        let document = try JSONDocument.parse(
            Array("[9223372036854775807,-9223372036854775808,9223372036854775808,-0,1596771003000]".utf8))
        let items = document.items(ofArray: 0)
        #expect(document.kind(items[0]) == .integer && document.tape[items[0]].integer == Int64.max)
        #expect(document.kind(items[1]) == .integer && document.tape[items[1]].integer == Int64.min)
        #expect(document.kind(items[2]) == .number)
        #expect(document.numberText(at: items[2]) == "9223372036854775808")
        #expect(document.tape[items[3]].integer == 0)
        #expect(document.tape[items[4]].integer == 1_596_771_003_000)
    }

    @Test func stringEscapesAreDecoded() throws {
        #expect(try first(#"["\"\\\/\b\f\n\r\t"]"#) as? String == "\"\\/\u{8}\u{C}\n\r\t")
        #expect(try first(#"["\u00e9\u00E9"]"#) as? String == "éé")
        #expect(try first(#"["a\u0000b"]"#) as? String == "a\u{0}b")
        #expect(try first(#"["\ud83d\ude00"]"#) as? String == "😀")
        for bad in [#"["\x"]"#, #"["\u12"]"#, #"["\u12G4"]"#, #"["\U0041"]"#, #"["\"#, #"["\'"]"#] {
            #expect(!accepts(bad), "\(bad)")
        }
    }

    @Test func loneSurrogatesAreRejectedAsJSONSerializationDoes() {
        #expect(!accepts(#"["\ud800"]"#))
        #expect(!accepts(#"["\udc00"]"#))
        #expect(!accepts(#"["\ud800\u0041"]"#))
        #expect(!accepts(#"["\ud800\ud800"]"#))
        #expect(!accepts(#"["\ud800x"]"#))
        #expect(!accepts(#"["\ude00\ud83d"]"#))
        #expect(error(#"["\udc00"]"#)?.message.contains("lone low surrogate") == true)
    }

    @Test func rawStringBytesMustBeUTF8AndNotControlCharacters() {
        #expect(accepts(bytes: [0x22, 0x63, 0x61, 0x66, 0xC3, 0xA9, 0x22]))  // "café"
        #expect(accepts(bytes: [0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22]))
        #expect(accepts(bytes: [0x22, 0xEF, 0xBF, 0xBF, 0x22]))  // U+FFFF, a noncharacter, is allowed
        #expect(accepts(bytes: [0x22, 0x7F, 0x22]))  // DEL is not a control character for JSON
        let bad: [[UInt8]] = [
            [0xFF], [0xC0, 0xAF], [0xC1, 0xBF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0xF8, 0x88, 0x80, 0x80, 0x80], [0xC3], [0xE2, 0x82], [0x80], [0xF5, 0x80, 0x80, 0x80],
        ]
        for sequence in bad {
            #expect(!accepts(bytes: [0x22] + sequence + [0x22]), "\(sequence)")
            let failure = try? #require(throws: JSONParseError.self) {
                try JSONDocument.parse([0x22] + sequence + [0x22])
            }
            #expect(failure?.isInvalidUTF8 == true, "\(sequence)")
        }
        for control in [UInt8(0x00), 0x09, 0x0A, 0x0D, 0x1F] {
            #expect(!accepts(bytes: [0x22, 0x61, control, 0x22]), "\(control)")
        }
        #expect(error("[\"a\tb\"]")?.message.contains("control character") == true)
    }

    @Test func longStringsAreScannedCorrectlyAcrossWordBoundaries() throws {
        // The 8-byte scan must stop at a quote, backslash, control or non-ASCII byte at every offset.
        for length in 0..<40 {
            for special in ["\\\"", "\\\\", "é", "\\u0041", "\\n"] {
                let text = String(repeating: "a", count: length) + special + String(repeating: "b", count: 17)
                let parsed = try first("[\"\(text)\"]") as? String
                let expected = try JSONSerialization.jsonObject(with: Data("[\"\(text)\"]".utf8)) as? [String]
                #expect(parsed == expected?.first, "\(length) \(special)")
            }
            #expect(!accepts(bytes: [0x22] + Array(repeating: 0x61, count: length) + [0x01, 0x22]))
            #expect(!accepts(bytes: [0x22] + Array(repeating: 0x61, count: length)))
        }
    }

    @Test func whitespaceIsSpaceTabLFAndCROnly() {
        #expect(accepts(" \t\r\n{ \"a\" : [ 1 , 2 ] } \t\r\n"))
        for bad: [UInt8] in [[0x0B], [0x0C], [0xC2, 0xA0], [0xE3, 0x80, 0x80]] {
            #expect(!accepts(bytes: bad + Array("{}".utf8)), "\(bad)")
        }
    }

    @Test func aUTF8ByteOrderMarkIsSkippedAtTheStartOnly() {
        #expect(accepts(bytes: [0xEF, 0xBB, 0xBF] + Array("{}".utf8)))
        #expect(!accepts(bytes: Array("{}".utf8) + [0xEF, 0xBB, 0xBF]))
        #expect(!accepts(bytes: [0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF] + Array("{}".utf8)))
        #expect(!accepts(bytes: [0xFF, 0xFE, 0x7B, 0x00, 0x7D, 0x00]))  // UTF-16: UTF-8 only
    }

    @Test func exactlyOneValueMakesADocument() {
        for bad in ["", " ", "{} {}", "{}x", "[1] 2", "1 2", "{}\u{0}"] { #expect(!accepts(bad), "\(bad)") }
        for good in ["1", "\"x\"", "{}", "[]", " [ ] "] { #expect(accepts(good), "\(good)") }
    }

    @Test func objectsNeedStringKeysColonsAndCommas() {
        for bad in ["{1:2}", "{a:1}", "{'a':1}", "{\"a\" 1}", "{\"a\":1 \"b\":2}", "{,}", "{\"a\":}", "{\"a\"}", "{"] {
            #expect(!accepts(bad), "\(bad)")
            #expect(!accepts(bad, .foundationCompatible), "\(bad)")
        }
        for bad in ["[1 2]", "[,1]", "[1,,2]", "[", "[1", "]"] {
            #expect(!accepts(bad), "\(bad)")
            #expect(!accepts(bad, .foundationCompatible), "\(bad)")
        }
    }

    @Test func trailingCommasOnlyInTheFoundationCompatibleMode() {
        for text in ["[1,]", "{\"a\":1,}", "[[1,],{\"b\":[],},]", "[1 , ]"] {
            #expect(!accepts(text), "\(text)")
            #expect(accepts(text, .foundationCompatible), "\(text)")
        }
        // One trailing comma, not two, and never alone.
        for text in ["[1,,]", "[,]", "{,}", "{\"a\":1,,}"] { #expect(!accepts(text, .foundationCompatible), "\(text)") }
    }

    @Test func nestingIsLimitedTo512LikeJSONSerialization() {
        #expect(accepts(String(repeating: "[", count: 512) + String(repeating: "]", count: 512)))
        #expect(!accepts(String(repeating: "[", count: 513) + String(repeating: "]", count: 513)))
        #expect(accepts(String(repeating: "{\"a\":", count: 512) + "1" + String(repeating: "}", count: 512)))
        #expect(!accepts(String(repeating: "{\"a\":", count: 513) + "1" + String(repeating: "}", count: 513)))
        // Far deeper input fails fast instead of recursing.
        #expect(error(String(repeating: "[", count: 100_000))?.message.contains("nesting deeper than 512") == true)
    }

    @Test func duplicateKeysAreKeptAndTheLastOneWins() throws {
        let object = try JSONObject.parse(Array(#"{"a":1,"b":{"c":1},"a":"two","b":{"c":2}}"#.utf8))
        #expect(try object.string("a") == "two")
        #expect(try object.object("b")?.int64("c") == 2)
        let foundation = try JSONSerialization.jsonObject(with: Data(#"{"a":1,"a":"two"}"#.utf8)) as? [String: Any]
        #expect(foundation?["a"] as? String == "two")
    }

    @Test func escapedKeysAreFoundByTheirText() throws {
        let object = try JSONObject.parse(Array(#"{"tr\u0061nsaction_id":"7","in\u005fapp":[]}"#.utf8))
        #expect(try object.string("transaction_id") == "7")
        #expect(try object.objects("in_app").isEmpty)
    }

    @Test func errorsSayWhatAndWhere() {
        #expect(error(#"{"a":1,"b":x}"#) == JSONParseError("unexpected 'x' where a value was expected", offset: 11))
        #expect(error(#"{"a":"b"#)?.message.hasPrefix("unterminated string") == true)
        #expect(error("[1,2")?.message == "unexpected end of input in an array")
        #expect(error("")?.message == "unexpected end of input, expected a value")
    }
}
