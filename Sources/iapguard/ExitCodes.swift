import IAPGuard

/// The process exit codes, taken from the library's ``RunExitCode`` so there is one definition
/// (documented in docs/operations.md).
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

    static let help = RunExitCode.helpText
}
