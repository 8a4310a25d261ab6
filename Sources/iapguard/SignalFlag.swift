import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Turns SIGTERM/SIGINT into a flag the pipeline checks between batches, so a stop is clean.
final class SignalFlag: @unchecked Sendable {
    // The dispatch sources are only created in init and kept alive; never mutated after.
    static let shared = SignalFlag()
    private let sources: [any DispatchSourceSignal]
    private let flag = Flag()

    private final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        func set() { lock.withLock { value = true } }
        func get() -> Bool { lock.withLock { value } }
    }

    private init() {
        var made: [any DispatchSourceSignal] = []
        let flag = self.flag
        for sig in [SIGTERM, SIGINT] {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                flag.set()
                FileHandle.standardError.write(
                    Data("iapguard: signal received, stopping after the current batch\n".utf8))
            }
            source.resume()
            made.append(source)
        }
        sources = made
    }

    func isSet() -> Bool { flag.get() }
}
