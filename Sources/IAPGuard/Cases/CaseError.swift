/// Why a case command could not be done.
public enum CaseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No case has this id.
    case notFound(String)
    /// The store has no cases yet (no run since the cases migration).
    case noCases
    /// A bad argument (status, name or note).
    case invalid(String)

    public var description: String {
        switch self {
        case .notFound(let id): return "no case \(id) (see `iapguard cases list`)"
        case .noCases: return "the store has no cases yet: run `iapguard run` first"
        case .invalid(let message): return message
        }
    }
}
