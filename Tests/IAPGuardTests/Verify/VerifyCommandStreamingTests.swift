import Foundation
import Testing

@testable import IAPGuard

/// `iapguard verify` reads its files in batches: verdicts come out in line order across batch boundaries,
/// blank lines are skipped, and the exit status says whether any record failed.
@Suite struct VerifyCommandStreamingTests {
    typealias World = VerifyTestWorld

    struct Output {
        var status: Int32
        var lines: [String]
        var stderr: String
    }

    /// Runs `iapguard verify` on a file of `lines`, then on `moreFiles` (already written).
    static func verify(_ lines: [String], in directory: URL, then moreFiles: [URL] = []) throws -> Output {
        let binary = try #require(PipelineTestWorld.binary, "the iapguard binary must be built next to the tests")
        let root = directory.appendingPathComponent("root.der")
        try World.good.rootDER.write(to: root)
        let input = directory.appendingPathComponent("records.jwsl")
        try Data(lines.joined(separator: "\n").utf8).write(to: input)
        let out = directory.appendingPathComponent("stdout.txt")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        let handle = try FileHandle(forWritingTo: out)
        let err = directory.appendingPathComponent("stderr.txt")
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let errHandle = try FileHandle(forWritingTo: err)
        let process = Process()
        process.executableURL = binary
        process.arguments =
            [
                "verify", "--trust", root.path, "--bundle-id", "com.example.coins", "--environment", "Production",
                input.path,
            ] + moreFiles.map(\.path)
        process.standardOutput = handle
        process.standardError = errHandle
        try process.run()
        process.waitUntilExit()
        try handle.close()
        try errHandle.close()
        let text = try String(contentsOf: out, encoding: .utf8)
        return Output(
            status: process.terminationStatus, lines: text.split(separator: "\n").map(String.init),
            stderr: try String(contentsOf: err, encoding: .utf8))
    }

    static func scratch() throws -> URL {
        let directory = TestScratch.root.appendingPathComponent("verify-stream-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test func verdictsKeepLineOrderAcrossBatchesAndAFailureSetsTheExitStatus() throws {
        let good = try World.good.sign(payload: World.transaction())
        var lines = Array(repeating: good, count: 9_000)
        lines[4] = ""
        lines[8_500] = "not-a-jws"
        let output = try Self.verify(lines, in: try Self.scratch())
        #expect(output.status == 1)
        #expect(output.lines.count == 8_999, "the blank line has no verdict")
        let numbers = output.lines.compactMap { line in
            line.split(separator: " ").first?.split(separator: ":").last.flatMap { Int($0) }
        }
        #expect(numbers == Array(1...4) + Array(6...9_000))
        let failed = output.lines.filter { $0.contains("  failed  ") }
        #expect(failed.count == 1)
        #expect(failed.first?.contains(":8501  failed") == true)
        #expect(failed.first?.contains("bad-format") == true)
        #expect(output.stderr == "iapguard verify: 8999 records: 8998 verified, 1 failed\n")
    }

    /// An empty export is not a verified one: nothing to verify exits 1 and says so.
    @Test func filesWithoutARecordExitOneAndSaySo() throws {
        let output = try Self.verify(["", "", ""], in: try Self.scratch())
        #expect(output.status == 1)
        #expect(output.lines.isEmpty)
        #expect(output.stderr.hasPrefix("iapguard verify: no record to verify: "))
        #expect(output.stderr.hasSuffix("records.jwsl holds only blank lines\n"))
    }

    /// A gzip file is named once as compressed, not reported as one bad JWS per line of binary, and the
    /// files after it are still verified.
    @Test func aCompressedFileIsNamedAsCompressedAndTheOtherFilesAreStillVerified() throws {
        let directory = try Self.scratch()
        let compressed = directory.appendingPathComponent("export.jsonl.gz")
        try Data([0x1F, 0x8B, 0x08, 0x00, 0x0A, 0x2E, 0x0A, 0xFF, 0x00, 0x0A]).write(to: compressed)
        let after = directory.appendingPathComponent("after.jwsl")
        let good = try World.good.sign(payload: World.transaction())
        try Data("\(good)\n".utf8).write(to: after)
        let output = try Self.verify([good], in: directory, then: [compressed, after])
        #expect(output.status == 1, "a file that could not be read is not a clean result")
        #expect(output.lines.count == 2, "one verdict per record of the two readable files: \(output.lines)")
        #expect(output.lines.allSatisfy { $0.contains("  verified  ") })
        #expect(output.stderr.contains("export.jsonl.gz: the file is gzip-compressed"), "\(output.stderr)")
        #expect(output.stderr.hasSuffix("2 records: 2 verified, 0 failed; 1 file not read: \(compressed.path)\n"))
    }

    @Test func aFileOfVerifiedRecordsExitsZero() throws {
        let good = try World.good.sign(payload: World.transaction())
        let notification = try World.good.sign(payload: World.notification(appAppleID: nil))
        let output = try Self.verify(
            [good, #"{"signedPayload":"\#(notification)"}"#, #"{"signedTransactionInfo":"\#(good)"}"#],
            in: try Self.scratch())
        #expect(output.status == 0, "\(output.lines)")
        #expect(output.lines.count == 3)
        #expect(output.lines[1].contains("  verified  notification"))
        #expect(output.stderr == "iapguard verify: 3 records: 3 verified, 0 failed\n")
    }

    /// A verdict quotes payload text: a control character in it is escaped, never written to the terminal.
    @Test func aControlCharacterInAQuotedDetailIsEscaped() throws {
        func part(_ json: String) -> String {
            Data(json.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        }
        let line = part(#"{"alg":"ES\u001b[2J256","x5c":[]}"#) + "." + part("{}") + ".AAAA"
        let output = try Self.verify([line], in: try Self.scratch())
        #expect(output.status == 1)
        #expect(output.lines.count == 1)
        #expect(output.lines.first?.contains("'ES\\u{1B}[2J256'") == true, "\(output.lines)")
        #expect(output.lines.first?.unicodeScalars.contains { $0.value == 0x1B } == false)
    }
}
