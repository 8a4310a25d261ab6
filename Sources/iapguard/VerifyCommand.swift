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

            Exit status: 0 when every record verified, 1 when any record failed, 64 on a usage error \
            (bad option, unreadable FILE or --trust certificate).
            """
    )

    @Option(
        name: .customLong("trust"),
        help: ArgumentHelp(
            "A trusted root certificate (DER). Repeatable; replaces the default Apple Root CA - G3.",
            valueName: "CERT.der"))
    var trust: [String] = []

    @Option(
        name: .customLong("bundle-id"),
        help: ArgumentHelp("A bundle ID to accept. Repeatable; at least one is required.", valueName: "ID"))
    var bundleIDs: [String] = []

    @Option(
        name: .customLong("environment"),
        help: ArgumentHelp(
            "An environment to accept: Production or Sandbox. Repeatable; default Production.", valueName: "ENV"))
    var environments: [String] = []

    @Option(
        name: .customLong("app-apple-id"),
        help: ArgumentHelp(
            "The app's Apple ID, required in Production notifications (needs exactly one --bundle-id).", valueName: "N")
    )
    var appAppleID: Int64?

    @Flag(name: .customLong("json"), help: "Print one JSON object per record.")
    var json = false

    @Argument(help: ArgumentHelp("Files of signed records.", valueName: "FILE"))
    var files: [String] = []

    func validate() throws {
        if files.isEmpty { throw ValidationError("give at least one FILE") }
        if bundleIDs.isEmpty { throw ValidationError("give at least one --bundle-id") }
        if appAppleID != nil && bundleIDs.count != 1 {
            throw ValidationError("--app-apple-id needs exactly one --bundle-id")
        }
        _ = try parsedEnvironments()
    }

    private func parsedEnvironments() throws -> Set<AppleEnvironment> {
        if environments.isEmpty { return [.production] }
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
        if roots.isEmpty { roots = [AppleRootCertificates.appleRootCAG3DER] }
        let environmentSet = try parsedEnvironments()
        let policy = VerificationPolicy(
            apps: bundleIDs.map {
                VerificationPolicy.App(bundleID: $0, appAppleID: appAppleID, environments: environmentSet)
            })
        let verifier: JWSVerifier
        do {
            verifier = try JWSVerifier(trustedRootsDER: roots, policy: policy)
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
