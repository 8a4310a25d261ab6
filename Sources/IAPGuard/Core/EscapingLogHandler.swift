import Logging

/// Human log lines with input-derived text escaped (``TerminalText``): the message and every metadata value.
/// (The JSON lines escape control characters already.)
public struct EscapingLogHandler: LogHandler {
    /// The handler that writes the lines.
    public var wrapped: any LogHandler

    public init(wrapped: any LogHandler) {
        self.wrapped = wrapped
    }

    public var logLevel: Logger.Level {
        get { wrapped.logLevel }
        set { wrapped.logLevel = newValue }
    }

    public var metadata: Logger.Metadata {
        get { wrapped.metadata }
        set { wrapped.metadata = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { wrapped[metadataKey: key] }
        set { wrapped[metadataKey: key] = newValue }
    }

    public func log(event: LogEvent) {
        var event = event
        event.message = "\(TerminalText.escaped("\(event.message)"))"
        event.metadata = event.metadata?.mapValues { .string(TerminalText.escaped("\($0)")) }
        wrapped.log(event: event)
    }
}
