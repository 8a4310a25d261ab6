import Foundation
import Logging
import Testing

@testable import IAPGuard

/// Input-derived text (a CSV header name, a configured path or source name) never reaches a terminal raw:
/// the stdout summary, the one-line result and the human log escape control and format characters.
@Suite struct TerminalTextTests {
    static let hostile = "x\u{1B}[2J\u{1B}[31mgone\r\u{202E}"

    @Test func controlAndFormatCharactersAreEscapedAndOtherTextIsKept() {
        #expect(TerminalText.escaped(Self.hostile) == #"x\u{1B}[2J\u{1B}[31mgone\u{D}\u{202E}"#)
        #expect(TerminalText.escaped("Zürich · 東京 ✓") == "Zürich · 東京 ✓")
    }

    @Test func theSummaryPrintsNoRawControlCharacter() {
        var summary = RunSummary(runID: 1, storePath: "/data/\(Self.hostile).sqlite")
        summary.sources = [.init(name: "orders\(Self.hostile)", kind: "orders", counts: WriteCounts(), error: nil)]
        summary.errors = ["source orders: orders.csv:1: the header has no order_id column (found: \(Self.hostile))"]
        summary.warnings = ["source x: delivered 0 records (the folder holds no file: \(Self.hostile))"]
        summary.reportFolder = "/r/\(Self.hostile)"
        for text in [summary.text(), summary.oneLine(exitCode: 69)] {
            let raw = text.unicodeScalars.filter { $0 != "\n" && TerminalText.isInvisible($0) }
            #expect(raw.isEmpty, "\(text.debugDescription)")
            #expect(text.contains(#"\u{1B}[2J"#))
        }
    }

    @Test func theHumanLogEscapesMessagesAndMetadata() {
        let lines = LinesBox()
        var logger = Logger(label: "t") { _ in EscapingLogHandler(wrapped: CapturingHandler(lines: lines)) }
        logger.logLevel = .info
        logger.error("source \(Self.hostile) failed", metadata: ["error": "\(Self.hostile)"])
        #expect(
            lines.all == [
                #"source x\u{1B}[2J\u{1B}[31mgone\u{D}\u{202E} failed | x\u{1B}[2J\u{1B}[31mgone\u{D}\u{202E}"#
            ])
    }

    final class LinesBox: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func add(_ line: String) { lock.withLock { lines.append(line) } }
        var all: [String] { lock.withLock { lines } }
    }

    struct CapturingHandler: LogHandler {
        let lines: LinesBox
        var logLevel: Logger.Level = .info
        var metadata: Logger.Metadata = [:]
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let values = (event.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.value)" }
            lines.add("\(event.message) | \(values.joined(separator: ","))")
        }
    }
}
