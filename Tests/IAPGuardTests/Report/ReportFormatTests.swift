import Foundation
import Testing

@testable import IAPGuard

@Suite struct ReportFormatTests {
    @Test func milliunitsPrintAsPlainDecimalsWithAtLeastTwoFractionDigits() {
        #expect(ReportFormat.decimal(milliunits: 990) == "0.99")
        #expect(ReportFormat.decimal(milliunits: 1000) == "1.00")
        #expect(ReportFormat.decimal(milliunits: 1234) == "1.234")
        #expect(ReportFormat.decimal(milliunits: 1) == "0.001")
        #expect(ReportFormat.decimal(milliunits: 0) == "0.00")
        #expect(ReportFormat.decimal(milliunits: -1500) == "-1.50")
        #expect(ReportFormat.decimal(milliunits: 1_234_567_890) == "1234567.89")
        #expect(ReportFormat.decimal(milliunits: Int64.min) == "-9223372036854775.808")
    }

    @Test func moneyForPeopleRoundsHalfAwayFromZeroToCents() {
        #expect(ReportFormat.money(milliunits: 481_613) == "481.61")
        #expect(ReportFormat.money(milliunits: 23_185) == "23.19")
        #expect(ReportFormat.money(milliunits: 990) == "0.99")
        #expect(ReportFormat.money(milliunits: 5) == "0.01")
        #expect(ReportFormat.money(milliunits: 4) == "0.00")
        #expect(ReportFormat.money(milliunits: -4) == "0.00")
        #expect(ReportFormat.money(milliunits: -1505) == "-1.51")
        #expect(ReportFormat.money(milliunits: 0) == "0.00")
        #expect(ReportFormat.money(milliunits: Int64.min) == "-9223372036854775.81")
    }

    /// Evidence prices and amounts are milliunits in the store; a spreadsheet must not read 9990 as 9,990.
    @Test func evidenceMoneyFieldsPrintAsAmountsAndOtherNumbersAsStored() {
        #expect(ReportFormat.evidenceValue(name: "price", value: "9990") == "9.99")
        #expect(ReportFormat.evidenceValue(name: "ref_price", value: "29990") == "29.99")
        #expect(ReportFormat.evidenceValue(name: "amount_ref", value: "1234") == "1.234")
        #expect(ReportFormat.evidenceValue(name: "units", value: "9990") == "9990")
        #expect(ReportFormat.evidenceValue(name: "price", value: "n/a") == "n/a")
        #expect(ReportFormat.evidenceValue(name: "transaction_id", value: "2000000000000001") == "2000000000000001")
    }

    @Test func timesPrintAsISO8601UTCWithMilliseconds() {
        #expect(ReportFormat.isoTime(millis: 0) == "1970-01-01T00:00:00.000Z")
        #expect(ReportFormat.isoTime(millis: 1_767_225_600_000) == "2026-01-01T00:00:00.000Z")
        #expect(ReportFormat.isoTime(millis: 1_709_210_096_789) == "2024-02-29T12:34:56.789Z")
        #expect(ReportFormat.isoTime(millis: -1) == "1969-12-31T23:59:59.999Z")
        #expect(ReportFormat.evidenceTime(name: "purchase_date", value: "1767225600000") == 1_767_225_600_000)
        #expect(ReportFormat.evidenceTime(name: "transaction_id", value: "1767225600000") == nil)
        #expect(ReportFormat.evidenceTime(name: "credited_at", value: "12") == nil)
    }

    @Test func csvNeutralisesFormulaStartersButNotPlainNumbers() {
        #expect(CSVTable.neutralise("=1+1") == "'=1+1")
        #expect(CSVTable.neutralise("+cmd") == "'+cmd")
        #expect(CSVTable.neutralise("-2+3") == "'-2+3")
        #expect(CSVTable.neutralise("@SUM(1)") == "'@SUM(1)")
        #expect(CSVTable.neutralise("\tx") == "'\tx")
        #expect(CSVTable.neutralise("\rx") == "'\rx")
        #expect(CSVTable.neutralise("＝1") == "'＝1")
        #expect(CSVTable.neutralise("-1.50") == "-1.50")
        #expect(CSVTable.neutralise("-") == "'-")
        #expect(CSVTable.neutralise("a=b") == "a=b")
        var table = CSVTable(header: ["a", "b"])
        table.append(["x\"y", nil])
        #expect(table.text == "\"a\",\"b\"\r\n\"x\"\"y\",\"\"\r\n")
    }

    @Test func htmlEscapesAllFiveCharactersAndMarksBidiControls() {
        #expect(HTMLText.escape("<a href='x'>&\"</a>") == "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;")
        #expect(HTMLText.data("a\u{202E}b") == "<bdi>a<span class=\"ctl\">⟦U+202E⟧</span>b</bdi>")
        #expect(HTMLText.data("abcdef", maxCharacters: 3) == "<bdi>abc</bdi><span class=\"trunc\">… [6 chars]</span>")
        #expect(HTMLText.plain("x\u{2066}<y>", maxCharacters: 50) == "x⟦U+2066⟧&lt;y&gt;")
        #expect(HTMLText.anchor("IAP-001\"><") == "IAP-001___")
    }

    /// Text with nothing to escape or neutralise is passed through as is; one markup or control character,
    /// or a byte outside printable ASCII, takes the careful path. The cap counts characters, not bytes.
    @Test func htmlPassesPlainTextThroughAndStillEscapesTheRest() {
        #expect(HTMLText.escape("tx-1000 9.99 USD") == "tx-1000 9.99 USD")
        #expect(HTMLText.data("u-42 com.example.coins") == "<bdi>u-42 com.example.coins</bdi>")
        #expect(HTMLText.data("a'b") == "<bdi>a&#39;b</bdi>")
        #expect(HTMLText.data("a\u{1F}b") == "<bdi>a<span class=\"ctl\">⟦U+001F⟧</span>b</bdi>")
        #expect(HTMLText.data("a\u{7F}") == "<bdi>a<span class=\"ctl\">⟦U+007F⟧</span></bdi>")
        #expect(HTMLText.data("line\tnext") == "<bdi>line\tnext</bdi>")
        #expect(HTMLText.data("é€x", maxCharacters: 3) == "<bdi>é€x</bdi>")
        #expect(HTMLText.data("abc", maxCharacters: 3) == "<bdi>abc</bdi>")
    }
}
