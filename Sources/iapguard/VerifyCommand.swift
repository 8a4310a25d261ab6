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

            Exit status: 0 when every record verified, 1 when any record failed, 64 on a usage error \
            (bad option, unreadable FILE, --trust certificate or --config file).
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

        var inputs: [(path: String, data: Data)] = []
        for path in files {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw usageError("cannot read \(path)")
            }
            inputs.append((path, data))
        }

        var anyFailed = false
        let printer = RecordPrinter(json: json)
        for input in inputs {
            var batch: [(line: Int, record: SignedRecord)] = []
            let lines = String(decoding: input.data, as: UTF8.self)
                .split(separator: "\n", omittingEmptySubsequences: false)
            for (index, line) in lines.enumerated() {
                guard let record = SignedRecord(line: line) else { continue }
                batch.append((index + 1, record))
                if batch.count == 4096 {
                    anyFailed =
                        verifyAndPrint(batch, file: input.path, verifier: verifier, printer: printer) || anyFailed
                    batch.removeAll(keepingCapacity: true)
                }
            }
            anyFailed = verifyAndPrint(batch, file: input.path, verifier: verifier, printer: printer) || anyFailed
        }
        if anyFailed { throw ExitCode.failure }
    }

    /// Verifies a batch (plain payloads on all cores with `verifyAll`), prints it in order and returns
    /// whether any record failed.
    private func verifyAndPrint(
        _ batch: [(line: Int, record: SignedRecord)],
        file: String,
        verifier: JWSVerifier,
        printer: RecordPrinter
    ) -> Bool {
        var plain: [(CompactJWS, SignedPayloadKind)] = []
        var plainIndex: [Int: Int] = [:]
        for (position, entry) in batch.enumerated() {
            if case .jws(let jws) = entry.record.content, let kind = entry.record.kind, kind != .notification {
                plainIndex[position] = plain.count
                plain.append((jws, kind))
            }
        }
        let plainOutcomes = verifier.verifyAll(plain)
        var anyFailed = false
        for (position, entry) in batch.enumerated() {
            let result: NotificationVerification
            switch entry.record.content {
            case .invalid(let outcome):
                result = NotificationVerification(outcome: outcome)
            case .jws(let jws):
                if let index = plainIndex[position] {
                    result = NotificationVerification(outcome: plainOutcomes[index])
                } else {
                    result = verifier.verifyNotification(jws)
                }
            }
            if result.outcome.status != .verified { anyFailed = true }
            printer.print(file: file, line: entry.line, kind: entry.record.kind, result: result)
        }
        return anyFailed
    }

    private func usageError(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("iapguard verify: \(message)\n".utf8))
        return ExitCode.validationFailure
    }
}
