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
}
