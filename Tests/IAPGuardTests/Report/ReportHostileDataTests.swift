import Foundation
import Testing

@testable import IAPGuard

/// Attacker-controlled text must stay inert in the HTML and intact (bar the documented `'`) in the CSV.
@Suite struct ReportHostileDataTests {
    static func writeHostile(options: ReportOptions = ReportOptions()) throws -> (URL, URL) {
        let reports = try ReportTestSupport.temporaryDirectory()
        let folder = try ReportWriter(reportsDirectory: reports, options: options).write(ReportFixtures.hostile())
        return (reports, folder)
    }

    @Test func hostileHTMLHasOnlyOurScriptNoHandlersNoForeignTagsAndBalancedLayout() throws {
        let (reports, folder) = try Self.writeHostile()
        defer { try? FileManager.default.removeItem(at: reports) }
        let verdict = try ReportTestSupport.htmlVerdict(folder.appendingPathComponent("report.html"))
        #expect(verdict.errors.isEmpty, "\(verdict.errors)")
        #expect(verdict.scripts == 1)
        #expect(verdict.tags["img"] == nil)
        #expect(verdict.tags["plaintext"] == nil)
        // Layout: one section per part (case queue, summary, charts, the rule, quarantine).
        #expect(verdict.tags["section"] == 5)
        let csp = try #require(verdict.csp)
        #expect(csp.hasPrefix("default-src 'none';"))
        #expect(csp.contains("script-src '\(HTMLPage.sha256Source(HTMLPage.script))'"))
        #expect(!csp.contains("unsafe-inline") && !csp.contains("http"))
        // The data is shown as text: the parser sees the hostile strings as characters.
        #expect(verdict.text.contains("<script>alert(1)</script>"))
        #expect(verdict.text.contains("\"><img src=x onerror=alert(1)>"))
        #expect(verdict.text.contains("javascript:alert(document.cookie)"))
        #expect(verdict.text.contains("⟦U+202E⟧"))
    }

    @Test func hostileHTMLNeutralisesBidiControlsCapsLongValuesAndLinksNoJavascriptURL() throws {
        let (reports, folder) = try Self.writeHostile()
        defer { try? FileManager.default.removeItem(at: reports) }
        let html = try String(contentsOf: folder.appendingPathComponent("report.html"), encoding: .utf8)
        #expect(!html.unicodeScalars.contains("\u{202E}"))
        #expect(!html.unicodeScalars.contains("\r"))
        #expect(!html.contains(String(repeating: "A", count: 2_001)))
        #expect(html.contains("… [10240 chars]"))
        #expect(!html.lowercased().contains("href=\"javascript"))
        #expect(!html.contains("<img"))
        #expect(html.components(separatedBy: "<script>").count == 2)
        #expect(html.contains("\u{FFFD}"))
        let index = try String(contentsOf: reports.appendingPathComponent("index.html"), encoding: .utf8)
        #expect(index.components(separatedBy: "<script>").count == 2)
        let indexVerdict = try ReportTestSupport.htmlVerdict(reports.appendingPathComponent("index.html"))
        #expect(indexVerdict.errors.isEmpty, "\(indexVerdict.errors)")
    }

    @Test func hostileCasesCSVReadsBackInPythonWithEveryFieldIntactButTheFormulaPrefix() throws {
        let (reports, folder) = try Self.writeHostile()
        defer { try? FileManager.default.removeItem(at: reports) }
        let cases = ReportFixtures.hostile().cases
        #expect(!cases.isEmpty)
        let rows = try ReportTestSupport.pythonCSVRows(folder.appendingPathComponent("cases.csv"))
        #expect(rows.first == ReportCSV.caseColumns)
        #expect(rows.count == cases.count + 1)
        let byID = Dictionary(rows.dropFirst().map { ($0[0], $0) }, uniquingKeysWith: { a, _ in a })
        let e = ReportTestSupport.expectedCell
        for c in cases {
            let row = try #require(byID[c.caseID])
            let column = { (name: String) -> String in row[ReportCSV.caseColumns.firstIndex(of: name) ?? 0] }
            #expect(column("summary") == e(c.summary))
            #expect(column("gaining_user_id") == e(c.gainingUserID ?? ""))
            #expect(column("anchor_transaction_id") == e(c.anchorTransactionID ?? ""))
            #expect(column("rules") == e(c.rules.joined(separator: " ")))
        }
    }

    @Test func hostileCSVReadsBackInPythonWithEveryFieldIntactButTheFormulaPrefix() throws {
        let (reports, folder) = try Self.writeHostile()
        defer { try? FileManager.default.removeItem(at: reports) }
        let input = ReportFixtures.hostile()
        let rows = try ReportTestSupport.pythonCSVRows(folder.appendingPathComponent("findings.csv"))
        #expect(rows.first == ReportCSV.findingColumns)
        let byID = Dictionary(rows.dropFirst().map { ($0[0], $0) }, uniquingKeysWith: { a, _ in a })
        #expect(byID.count == input.findings.count)
        for f in input.findings {
            let row = try #require(byID[f.findingID])
            let column = { (name: String) -> String in row[ReportCSV.findingColumns.firstIndex(of: name) ?? 0] }
            let e = ReportTestSupport.expectedCell
            #expect(column("transaction_id") == e(f.transactionID ?? ""))
            #expect(column("user_id") == e(f.userID ?? ""))
            #expect(column("product_id") == e(f.productID ?? ""))
            #expect(column("storefront") == e(f.storefront ?? ""))
            #expect(column("observed") == e(f.observed ?? ""))
            #expect(column("summary") == e(f.summary))
            #expect(column("suppressed_by") == e(f.suppression?.owner ?? ""))
            #expect(column("inconclusive_reason") == e(f.inconclusiveReason ?? ""))
            #expect(column("amount") == (f.amount.map { ReportFormat.decimal(milliunits: $0) } ?? ""))
        }
        // The 10 kB value is whole in the CSV.
        #expect(rows.contains { $0[9] == String(repeating: "A", count: 10_240) })
        // Formula starters are prefixed.
        #expect(rows.contains { $0[9] == "'=HYPERLINK(\"http://x\")" })
        #expect(rows.contains { $0[9] == "'+cmd|' /C calc'!A0" })
        #expect(rows.contains { $0[9] == "'@SUM(1)" })
        #expect(!rows.joined().contains { $0.hasPrefix("=") || $0.hasPrefix("+") || $0.hasPrefix("@") })

        let evidence = try ReportTestSupport.pythonCSVRows(folder.appendingPathComponent("evidence.csv"))
        #expect(evidence.first == ReportCSV.evidenceColumns)
        let expectedCount = input.findings.reduce(0) { $0 + $1.evidence.reduce(0) { $0 + $1.fields.count } }
        #expect(evidence.count - 1 == expectedCount)
        for f in input.findings {
            for (i, row) in f.evidence.enumerated() {
                for field in row.fields {
                    let match = evidence.contains {
                        $0[0] == f.findingID && $0[1] == String(i + 1)
                            && $0[2] == ReportTestSupport.expectedCell(row.kind)
                            && $0[3] == ReportTestSupport.expectedCell(field.name)
                            && $0[4] == ReportTestSupport.expectedCell(field.value ?? "")
                    }
                    #expect(match, "evidence \(f.findingID) row \(i + 1) field missing or altered")
                }
            }
        }
    }

    @Test func rawCSVUsesCRLFQuotesEveryFieldAndHasNoBOM() throws {
        let (reports, folder) = try Self.writeHostile()
        defer { try? FileManager.default.removeItem(at: reports) }
        let data = try Data(contentsOf: folder.appendingPathComponent("findings.csv"))
        #expect(!data.starts(with: [0xEF, 0xBB, 0xBF]))
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.hasPrefix("\"finding_id\",\"run_id\","))
        #expect(text.hasSuffix("\"\r\n"))
        let header = text.components(separatedBy: "\r\n")[0]
        #expect(header.split(separator: ",").allSatisfy { $0.hasPrefix("\"") && $0.hasSuffix("\"") })
    }
}
