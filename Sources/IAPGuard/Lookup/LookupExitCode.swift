/// The exit codes of `iapguard lookup`. 0, 64, 69, 74 and 78 mean what they mean for `run`
/// (``RunExitCode``); 3 is the lookup's own "not found", unused by `run`.
public enum LookupExitCode: Int32, Sendable, CaseIterable, CustomStringConvertible {
    /// The id matched something; the answer was printed.
    case found = 0
    /// Nothing in the store matches the id (the message says what was tried and when the last run was).
    case notFound = 3
    /// Bad command line (no id, unknown option, no config and no --store).
    case usage = 64
    /// The store cannot be opened (missing file, not an iapguard store).
    case storeUnavailable = 69
    /// The audit log or the --html file cannot be written.
    case ioError = 74
    /// The configuration is invalid.
    case badConfig = 78

    public var description: String {
        switch self {
        case .found: return "found"
        case .notFound: return "not found"
        case .usage: return "bad usage"
        case .storeUnavailable: return "the store cannot be read"
        case .ioError: return "cannot write the audit log or the output file"
        case .badConfig: return "bad configuration"
        }
    }
}
