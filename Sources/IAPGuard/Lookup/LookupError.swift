/// Why a lookup could not be answered (as opposed to "not found", which is an answer).
public enum LookupError: Error, Sendable, CustomStringConvertible {
    /// Bad command-line input (empty id, unknown kind).
    case usage(String)
    /// The store cannot be opened or read.
    case storeUnavailable(String)
    /// The audit log cannot be appended to; the lookup is refused rather than left unlogged.
    case auditLog(String)

    public var description: String {
        switch self {
        case .usage(let message): return message
        case .storeUnavailable(let message): return "the store cannot be read: \(message)"
        case .auditLog(let message): return "the audit log cannot be written (lookup refused): \(message)"
        }
    }

    /// The process exit code for this error.
    public var exitCode: LookupExitCode {
        switch self {
        case .usage: return .usage
        case .storeUnavailable: return .storeUnavailable
        case .auditLog: return .ioError
        }
    }
}
