import ArgumentParser
import Foundation
import IAPGuard
import Logging

/// Log output format on stderr.
enum LogFormat: String, CaseIterable, ExpressibleByArgument {
    case auto, human, json
}

/// Sets up swift-log once: human lines on a terminal, JSON lines otherwise (or as asked). Logs go to
/// stderr; stdout carries only the result.
enum LogSetup {
    /// Whether stderr carries JSON lines (set once by ``bootstrap(format:level:)``).
    private static let jsonLines = JSONLines()

    private final class JSONLines: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        func set(_ new: Bool) { lock.withLock { value = new } }
        func get() -> Bool { lock.withLock { value } }
    }

    /// Writes `text` as a plain `iapguard: …` line on stderr for a person, unless stderr carries JSON lines:
    /// there every line must parse, and the same fact is already a log event.
    static func plainLine(_ text: String) {
        guard !jsonLines.get() else { return }
        FileHandle.standardError.write(Data("iapguard: \(TerminalText.escaped(text))\n".utf8))
    }

    static func bootstrap(format: LogFormat, level: Logger.Level) {
        let useJSON: Bool
        switch format {
        case .json: useJSON = true
        case .human: useJSON = false
        case .auto: useJSON = isatty(STDERR_FILENO) == 0
        }
        jsonLines.set(useJSON)
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler =
                useJSON
                ? JSONLineLogHandler(label: label)
                : EscapingLogHandler(wrapped: StreamLogHandler.standardError(label: label))
            handler.logLevel = level
            return handler
        }
    }
}

/// One JSON object per log line on stderr, metadata as keys.
struct JSONLineLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// UTC with milliseconds, so that the stages of a run a few seconds long can be told apart.
    static func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    func log(event: LogEvent) {
        var object: [String: String] = [
            "ts": Self.timestamp(Date()), "level": event.level.rawValue, "msg": "\(event.message)",
            "logger": label,
        ]
        for (key, value) in metadata.merging(event.metadata ?? [:], uniquingKeysWith: { $1 }) {
            object[key] = "\(value)"
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        if let data = try? encoder.encode(object) {
            FileHandle.standardError.write(data + Data("\n".utf8))
        }
    }
}
