import Testing

@testable import IAPGuard

@Suite struct ParsingHelpersTests {
    @Test func decimalPricesBecomeExactMilliunits() {
        #expect(Money.milliunits(fromDecimal: "0.99") == 990)
        #expect(Money.milliunits(fromDecimal: "12") == 12000)
        #expect(Money.milliunits(fromDecimal: "1.2345") == nil)
        #expect(Money.milliunits(fromDecimal: "1e3") == nil)
        #expect(Money.decimalText(milliunits: 990) == "0.99")
        #expect(Money.decimalText(milliunits: 1234) == "1.234")
    }

    @Test func rfc3339AndEpochMillisecondsParse() {
        #expect(TimeParser.epochMillis("1596771003000") == 1_596_771_003_000)
        #expect(TimeParser.epochMillis("2020-08-07T03:30:03Z") == 1_596_771_003_000)
        #expect(TimeParser.epochMillis("2020-08-07T05:30:03.5+02:00") == 1_596_771_003_500)
        #expect(TimeParser.epochMillis("2020-08-07") == 1_596_758_400_000)
        #expect(TimeParser.epochMillis("yesterday") == nil)
        #expect(TimeParser.iso8601(1_596_771_003_000) == "2020-08-07T03:30:03Z")
    }

    /// Money and rates from input can be absurd: converted, rounded or summed, they are left out or held at the
    /// bounds, never trapped on.
    @Test func absurdAmountsAreLeftOutOrHeldAtTheBounds() {
        #expect(Money.rounded(1.6) == 2)
        #expect(Money.rounded(9.3e18) == nil && Money.rounded(.nan) == nil && Money.rounded(-.infinity) == nil)
        #expect(Money.saturatingSum(.max, 1) == .max && Money.saturatingSum(.min, -1) == .min)
        #expect(Money.saturatingSum(40, 2) == 42)
    }

    /// Any 64-bit time is written, never trapped on: a forged receipt's or a sentinel's date reaches reports.
    @Test func everyEpochMillisecondsValueIsWrittenWithoutTrapping() {
        #expect(TimeParser.iso8601(253_402_300_799_999) == "9999-12-31T23:59:59.999Z")
        #expect(TimeParser.iso8601(-62_135_596_800_000) == "0001-01-01T00:00:00Z")
        #expect(TimeParser.iso8601(-1) == "1969-12-31T23:59:59.999Z")
        for extreme in [Int64.max, Int64.min, 253_402_300_800_000, -62_135_596_800_001] {
            #expect(TimeParser.iso8601(extreme) == "\(extreme) ms since 1970 (not a calendar time)")
        }
    }

    /// ASCII amounts are read from their bytes; they must read exactly as the Unicode rules read them.
    @Test func asciiAmountsReadAsTheUnicodeRulesReadThem() {
        let inputs = [
            "0.99", "12", "-1.5", "+1.5", "1234.567", "1.2345", "1e3", "", " ", "-", "+", ".", "1.", ".5", "-.5",
            " 4.99\t", "\t7", "1..2", "1.2.3", "+-5", "--5", "0x10", "00012.010", "9223372036854775",
            "9223372036854776",
            "9223372036854775.807", "9223372036854775.808", "-9223372036854775.807", "99999999999999999999",
            "1,5", "1 5", "1.5\n", "\r1", "١٢", "4.99\u{00A0}", "\u{2003}3", "1\u{0301}",
        ]
        for input in inputs {
            #expect(Money.milliunits(fromDecimal: input) == Money.unicodeMilliunits(fromDecimal: input), "\(input)")
        }
        #expect(Money.milliunits(fromDecimal: " 4.99\t") == 4990)
        #expect(Money.milliunits(fromDecimal: "4.99\u{00A0}") == 4990)
        #expect(Money.milliunits(fromDecimal: "1.") == 1000)
        #expect(Money.milliunits(fromDecimal: "9223372036854775.808") == nil)
    }
}
