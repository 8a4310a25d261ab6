import ArgumentParser
import Foundation
import IAPGuard

/// `iapguard verify`: verifies Apple-signed JWS records offline and prints one verdict per record.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify Apple-signed JWS (transactions, renewal info, notifications V2) offline.",
        discussion: """
            Each FILE holds one record per line: a compact JWS, or a JSON object with `signedPayload` \
            (notification V2) or `signedTransactionInfo`. Blank lines are skipped. The kind of a bare \
            JWS is inferred from its payload. Certificates are checked at each payload's signedDate.

            Output, one line per record: FILE:LINE  verified|failed  KIND  REASON  DETAIL
            (or one JSON object per line with --json).

            With --config FILE, the defaults come from the config: its trusted roots (Apple Root CA - G3 \
            unless trust_apple_root is false, plus its trust: certificates), its apps with their \
            environments and app Apple IDs. --trust, --bundle-id and --environment given on the command \
            line replace the config's roots, apps and environments respectively.

            A last line on stderr counts the records, verified and failed.

            A compressed or UTF-16 FILE is not read: an error on stderr names it, and the other files are \
            verified.

            Exit status: 0 when every record verified, 1 when any record failed, a FILE could not be read as \
            text, or the files hold no record, 64 on a usage error (bad option, unreadable FILE, --trust certificate or --config file).
            """
    )

    @Option(
        name: .customLong("trust"),
        help: ArgumentHelp(
            "A trusted root certificate (DER). Repeatable; replaces the default roots (Apple Root CA - G3, or the config's).",
            valueName: "CERT.der"))
    var trust: [String] = []

    @Option(
        name: .customLong("bundle-id"),
        help: ArgumentHelp(
            "A bundle ID to accept. Repeatable; required unless --config gives the apps.", valueName: "ID"))
    var bundleIDs: [String] = []

    @Option(
        name: .customLong("environment"),
        help: ArgumentHelp(
            "An environment to accept: Production or Sandbox. Repeatable; default Production (or each configured app's).",
            valueName: "ENV"))
    var environments: [String] = []

    @Option(
        name: .customLong("app-apple-id"),
        help: ArgumentHelp(
            "The app's Apple ID, required in Production notifications (needs exactly one --bundle-id).", valueName: "N")
    )
    var appAppleID: Int64?

    @Option(
        name: .customLong("config"),
        help: ArgumentHelp(
            "An iapguard config whose trust roots, apps and environments are the defaults.",
            valueName: "FILE"))
    var config: String?

    @Flag(name: .customLong("json"), help: "Print one JSON object per record.")
    var json = false

    @Argument(help: ArgumentHelp("Files of signed records.", valueName: "FILE"))
    var files: [String] = []

    func validate() throws {
        if files.isEmpty { throw ValidationError("give at least one FILE") }
        if bundleIDs.isEmpty && config == nil { throw ValidationError("give at least one --bundle-id, or --config") }
        if appAppleID != nil && bundleIDs.count != 1 {
            throw ValidationError("--app-apple-id needs exactly one --bundle-id")
        }
        _ = try parsedEnvironments()
    }

    /// The `--environment`s, or `nil` when none was given.
    private func parsedEnvironments() throws -> Set<AppleEnvironment>? {
        if environments.isEmpty { return nil }
        var result: Set<AppleEnvironment> = []
        for name in environments {
            guard let environment = AppleEnvironment(appleValue: name), environment.isSignedByApple else {
                throw ValidationError("--environment must be Production or Sandbox, not '\(name)'")
            }
            result.insert(environment)
        }
        return result
    }

    func run() throws {
        var roots: [Data] = []
        for path in trust {
            guard let der = FileManager.default.contents(atPath: path) else {
                throw usageError("cannot read --trust certificate \(path)")
            }
            roots.append(der)
        }
        var loadedConfig: Config?
        if let config {
            do {
                loadedConfig = try Config.load(from: URL(fileURLWithPath: config))
            } catch {
                throw usageError("\(error)")
            }
        }
        let verifier: JWSVerifier
        do {
            let setup = try VerifierSetup(
                config: loadedConfig, trustedRootsDER: roots, bundleIDs: bundleIDs,
                environments: try parsedEnvironments(), appAppleID: appAppleID)
            verifier = try JWSVerifier(trustedRootsDER: setup.trustedRootsDER, policy: setup.policy)
        } catch {
            throw usageError("\(error)")
        }

        // Every file must be readable before the first verdict is printed.
        for path in files where !FileManager.default.isReadableFile(atPath: path) {
            throw usageError("cannot read \(path)")
        }
        var tally = Tally()
        let printer = RecordPrinter(json: json)
        var unreadable: [String] = []
        for path in files {
            do {
                // A compressed or UTF-16 file read as lines is binary noise: one "not a compact JWS" per
                // line would hide what is wrong. Say it once and go on with the other files.
                if let problem = try Self.encodingProblem(path) {
                    FileHandle.standardError.write(
                        Data("iapguard verify: \(TerminalText.escaped(path)): \(problem)\n".utf8))
                    unreadable.append(path)
                    continue
                }
                tally.add(try verifyStreaming(path, verifier: verifier, printer: printer))
            } catch {
                throw usageError("cannot read \(path): \(error)")
            }
        }
        // On stderr, so that stdout stays one line per record.
        let readFiles = files.filter { !unreadable.contains($0) }
        var summary =
            tally.records == 0
            ? "no record to verify"
                + (readFiles.isEmpty
                    ? ""
                    : ": \(readFiles.joined(separator: ", ")) \(readFiles.count == 1 ? "holds" : "hold") only blank lines")
            : "\(tally.records) record\(tally.records == 1 ? "" : "s"): \(tally.records - tally.failed) verified, \(tally.failed) failed"
        if !unreadable.isEmpty {
            summary +=
                "; \(unreadable.count) file\(unreadable.count == 1 ? "" : "s") not read: \(unreadable.joined(separator: ", "))"
        }
        FileHandle.standardError.write(Data("iapguard verify: \(TerminalText.escaped(summary))\n".utf8))
        // Nothing verified is not "every record verified": a script must not take an empty file for a good one.
        if tally.failed > 0 || tally.records == 0 || !unreadable.isEmpty { throw ExitCode.failure }
    }

    /// Why `path` cannot be read as lines of UTF-8 text (compressed, or UTF-16), or nil.
    static func encodingProblem(_ path: String) throws -> String? {
        let url = URL(fileURLWithPath: path)
        if let compression = try SourceIngestor.compression(of: url) {
            return "the file is \(compression)-compressed; verify reads uncompressed UTF-8 text (decompress it first)"
        }
        if let encoding = try SourceIngestor.utf16Encoding(of: url) {
            return "the file is UTF-16 (\(encoding) byte order mark); verify reads UTF-8 text"
        }
        return nil
    }

    /// Records seen and records that failed.
    struct Tally {
        var records = 0
        var failed = 0

        mutating func add(_ other: Tally) {
            records += other.records
            failed += other.failed
        }
    }

    /// Lines verified together: enough to keep every core busy, few enough that memory stays flat
    /// whatever the file's size.
    static let batchLines = 8192

    /// Reads `path` in batches of lines, verifies each batch on all cores (parsing, verification and
    /// formatting of each line run on the workers), prints its verdicts in order, and returns how many
    /// records it read and how many failed.
    private func verifyStreaming(_ path: String, verifier: JWSVerifier, printer: RecordPrinter) throws -> Tally {
        var batch: [VerifyLine] = []
        batch.reserveCapacity(Self.batchLines)
        var tally = Tally()
        func flush() {
            let verdicts = ParallelMap.map(batch) { line in
                line.verdict(file: path, verifier: verifier, printer: printer)
            }
            var output = ""
            for case let verdict? in verdicts {
                output += verdict.text
                output += "\n"
                tally.records += 1
                if verdict.failed { tally.failed += 1 }
            }
            FileHandle.standardOutput.write(Data(output.utf8))
            batch.removeAll(keepingCapacity: true)
        }
        try LineReader(url: URL(fileURLWithPath: path)).forEachLine { line in
            switch line {
            case .text(let number, let bytes):
                batch.append(VerifyLine(number: number, content: .text(String(decoding: bytes, as: UTF8.self))))
            case .oversize(let number, let length, _):
                batch.append(VerifyLine(number: number, content: .oversize(length)))
            }
            if batch.count == Self.batchLines { flush() }
        }
        flush()
        return tally
    }

    private func usageError(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("iapguard verify: \(message)\n".utf8))
        return ExitCode.validationFailure
    }
}

/// One input line of `iapguard verify`, as read.
private struct VerifyLine: Sendable {
    enum Content: Sendable {
        case text(String)
        /// A line longer than the reader's limit, with its length in bytes.
        case oversize(Int)
    }

    let number: Int
    let content: Content

    /// The printed verdict and whether it failed; `nil` for a blank line.
    func verdict(file: String, verifier: JWSVerifier, printer: RecordPrinter) -> (text: String, failed: Bool)? {
        switch content {
        case .oversize(let length):
            let result = NotificationVerification(
                outcome: .failed(.badFormat, "line is \(length) bytes, longer than the 8 MiB limit"))
            return (printer.format(file: file, line: number, kind: nil, result: result), true)
        case .text(let text):
            guard let record = SignedRecord(line: text[...]) else { return nil }
            let result = verifier.verify(record)
            return (
                printer.format(file: file, line: number, kind: record.kind, result: result),
                result.outcome.status != .verified
            )
        }
    }
}
