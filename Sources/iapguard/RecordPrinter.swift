import Foundation
import IAPGuard

/// Formats `iapguard verify` verdicts as text or JSON lines.
struct RecordPrinter: Sendable {
    let json: Bool

    private struct Line: Encodable {
        var file: String
        var line: Int
        var status: String
        var kind: String
        var reason: String?
        var detail: String?
        var transaction: VerificationOutcome?
        var renewal: VerificationOutcome?
        var appTransaction: VerificationOutcome?
    }

    /// One verdict as a line of text (without the line break).
    func format(file: String, line: Int, kind: SignedPayloadKind?, result: NotificationVerification) -> String {
        let outcome = result.outcome
        if json {
            let record = Line(
                file: file, line: line, status: outcome.status.rawValue, kind: kind?.rawValue ?? "unknown",
                reason: outcome.reason, detail: outcome.detail,
                transaction: result.transaction, renewal: result.renewal, appTransaction: result.appTransaction
            )
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            guard let data = try? encoder.encode(record) else {
                return #"{"status":"failed","reason":"internal","detail":"the verdict could not be encoded"}"#
            }
            return String(decoding: data, as: UTF8.self)
        } else {
            // Details quote payload text, and the file name is the operator's: one line, no control characters
            // reaching the terminal (escaped as the run's output escapes them).
            let detail = TerminalText.escaped(outcome.detail ?? "-")
            return
                "\(TerminalText.escaped(file)):\(line)  \(outcome.status.rawValue)  \(kind?.rawValue ?? "unknown")  \(outcome.reason ?? "-")  \(detail)"
        }
    }
}
