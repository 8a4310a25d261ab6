import Foundation
import Testing

@testable import IAPGuard

/// Helpers shared by the report tests.
enum ReportTestSupport {
    /// A fresh empty folder under the system temp folder.
    static func temporaryDirectory() throws -> URL {
        let url = TestScratch.root
            .appendingPathComponent("iapguard-report-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs `python3 <script> args...` and returns its stdout; fails the test on a non-zero exit.
    static func python(_ script: URL, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script.path] + arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "python3 failed: \(String(decoding: errors, as: UTF8.self))")
        return data
    }

    /// The rows of a CSV file as Python's csv module reads them.
    static func pythonCSVRows(_ file: URL) throws -> [[String]] {
        let data = try python(Fixtures.local("report/read_csv.py"), [file.path])
        return try JSONDecoder().decode([[String]].self, from: data)
    }

    struct HTMLVerdict: Decodable {
        var errors: [String]
        var scripts: Int
        var tags: [String: Int]
        var csp: String?
        var text: String
    }

    /// Python's html.parser verdict on an HTML file (see `Fixtures/report/check_html.py`).
    static func htmlVerdict(_ file: URL) throws -> HTMLVerdict {
        let scriptFile = file.deletingLastPathComponent().appendingPathComponent(".expected-script.js")
        try Data(HTMLPage.script.utf8).write(to: scriptFile)
        defer { try? FileManager.default.removeItem(at: scriptFile) }
        let data = try python(Fixtures.local("report/check_html.py"), [file.path, scriptFile.path])
        return try JSONDecoder().decode(HTMLVerdict.self, from: data)
    }

    /// What a CSV cell must read back as: the value, with `'` in front when it could start a formula.
    static func expectedCell(_ value: String) -> String {
        guard let first = value.unicodeScalars.first else { return value }
        let risky: Set<Unicode.Scalar> = [
            "=", "+", "-", "@", "\t", "\r", "\n", "\u{FF1D}", "\u{FF0B}", "\u{FF0D}", "\u{FF20}",
        ]
        guard risky.contains(first) else { return value }
        let plainNumber = value.range(of: #"^-?[0-9]+(\.[0-9]+)?$"#, options: .regularExpression) != nil
        return plainNumber ? value : "'" + value
    }

    /// All regular files under `directory` (relative paths, sorted), hidden ones included.
    static func listing(_ directory: URL) -> [String] {
        let fm = FileManager.default
        guard let e = fm.enumerator(atPath: directory.path) else { return [] }
        return e.compactMap { $0 as? String }.sorted()
    }
}
