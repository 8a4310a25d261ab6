import IAPGuard

/// The process exit codes, taken from the library's ``RunExitCode`` so there is one definition
/// (documented in README.md and docs/reports.md).
enum ExitCodes {
    static let ok = RunExitCode.success.rawValue
    static let findings = RunExitCode.findings.rawValue
    static let usage = RunExitCode.usage.rawValue
    static let badInput = RunExitCode.badInput.rawValue
    static let sourceUnreachable = RunExitCode.sourceUnavailable.rawValue
    static let locked = RunExitCode.lockHeld.rawValue
    static let badConfig = RunExitCode.badConfig.rawValue
    static let ioError = RunExitCode.ioError.rawValue
    static let internalError = RunExitCode.internalError.rawValue
    static let interrupted = RunExitCode.interrupted.rawValue
    static let interruptedFromTerminal = RunExitCode.interruptedFromTerminal.rawValue

    static let help = """
        Exit codes: 0 done, nothing at or above --fail-on; 2 done, findings at or above --fail-on; \
        64 bad usage; 65 bad input stopped the run; 69 a source could not be read; 70 internal error; \
        74 the store or the reports folder could not be written; 75 another run holds the lock; 78 bad \
        config; 130 stopped early on SIGINT (Ctrl-C), 143 on SIGTERM (committed work is kept). See docs/operations.md.
        """
}
