import Foundation
import Testing

@testable import IAPGuard

/// Writes the standard and hostile sample reports to `$IAPGUARD_REPORT_SAMPLES` for the browser check
/// (`scripts/report-samples.sh`). Skipped unless that variable is set.
@Suite struct ReportSampleExport {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["IAPGUARD_REPORT_SAMPLES"] != nil))
    func writesSampleReportsForTheBrowserCheck() throws {
        let root = URL(fileURLWithPath: ProcessInfo.processInfo.environment["IAPGUARD_REPORT_SAMPLES"] ?? "/tmp")
        let standard = try ReportWriter(reportsDirectory: root.appendingPathComponent("standard")).write(
            ReportFixtures.standard())
        let hostile = try ReportWriter(reportsDirectory: root.appendingPathComponent("hostile")).write(
            ReportFixtures.hostile())
        #expect(FileManager.default.fileExists(atPath: standard.appendingPathComponent("report.html").path))
        #expect(FileManager.default.fileExists(atPath: hostile.appendingPathComponent("report.html").path))
    }
}
