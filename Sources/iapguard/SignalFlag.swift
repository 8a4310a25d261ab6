import Foundation
import Logging

#if canImport(Glibc)
    import Glibc
#endif

/// Turns SIGTERM/SIGINT into a flag (remembering which came first) the pipeline checks between batches, so a stop is clean.
final class SignalFlag: @unchecked Sendable {
    // The dispatch sources are only created in init and kept alive; never mutated after.
    static let shared = SignalFlag()
    private let sources: [any DispatchSourceSignal]
    private let flag = Flag()

    private final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var signal: Int32?
        /// Keeps the first signal received: a SIGTERM after Ctrl-C does not change the exit code.
        func set(_ received: Int32) { lock.withLock { if signal == nil { signal = received } } }
        func get() -> Int32? { lock.withLock { signal } }
    }

    private init() {
        var made: [any DispatchSourceSignal] = []
        let flag = self.flag
        for sig in [SIGTERM, SIGINT] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                flag.set(sig)
                // A log event, so that JSON log lines stay JSON.
                Logger(label: "iapguard.signal").warning(
                    "signal received, stopping after the current batch", metadata: ["signal": "\(sig)"])
            }
            source.resume()
            made.append(source)
        }
        sources = made
    }

    func isSet() -> Bool { flag.get() != nil }

    /// The exit code for a run stopped by the signal received: 130 for SIGINT, 143 for SIGTERM.
    var stopExitCode: Int32 {
        flag.get() == SIGINT ? ExitCodes.interruptedFromTerminal : ExitCodes.interrupted
    }
}
