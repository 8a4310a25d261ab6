/// Why a report could not be written.
public enum ReportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The reports folder (or a file in it) could not be written.
    case cannotWrite(path: String, reason: String)
    /// `history.jsonl` has a line that is not a history entry.
    case badHistoryLine(path: String, line: Int, reason: String)

    public var description: String {
        switch self {
        case .cannotWrite(let path, let reason): return "cannot write report at \(path): \(reason)"
        case .badHistoryLine(let path, let line, let reason): return "\(path):\(line): bad history entry: \(reason)"
        }
    }
}
