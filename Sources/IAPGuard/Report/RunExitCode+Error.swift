import Foundation

extension RunExitCode {
    /// The code of a run (or a command) that stopped on `error`: the one mapping from errors to exit codes.
    ///
    /// - ``ConfigError`` → ``badConfig``; a window the options cannot give (``WindowError``) → ``usage``;
    ///   a source that stopped the run (``SourceError``) → ``badInput``; another run holding the lock
    ///   (``RunLock/Held``) → ``lockHeld``;
    /// - any store's error (``StoreFailure``: SQLite, PostgreSQL or the store layer), a report that could not
    ///   be written (``ReportError``) or a file-system error (`CocoaError`) → ``ioError``;
    /// - anything else is a bug → ``internalError``.
    public init(error: any Error) {
        switch error {
        case is ConfigError: self = .badConfig
        case is WindowError: self = .usage
        case is SourceError: self = .badInput
        case is RunLock.Held: self = .lockHeld
        case is any StoreFailure, is ReportError, is CocoaError: self = .ioError
        // A reader thread found the store damaged: the same I/O failure, whichever query met it first.
        case let failure as RuleQueryPrefetch.PrefetchError where failure.damagedStore: self = .ioError
        default: self = .internalError
        }
    }

    /// The exit codes one a line (`64 bad usage`), for a command's help; the table with what to do about
    /// each is in `docs/operations.md`.
    public static var helpText: String {
        "Exit codes: "
            + allCases.map { "\($0.rawValue) \($0)" }.joined(separator: "; ")
            + ". See docs/operations.md."
    }
}
