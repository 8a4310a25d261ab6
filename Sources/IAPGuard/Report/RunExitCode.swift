/// The exit codes of `iapguard run` (and the other commands), for cron and systemd. Values follow BSD
/// `sysexits.h` where one fits. Documented in `docs/operations.md`.
public enum RunExitCode: Int32, Sendable, CaseIterable, CustomStringConvertible {
    /// The run finished and no active hit is at or above `--fail-on`.
    case success = 0
    /// The run finished (reports written) and at least one active hit of a non-experimental rule is at or
    /// above `--fail-on`.
    case findings = 2
    /// Bad command line (unknown option, missing argument). `EX_USAGE`.
    case usage = 64
    /// Bad input stopped the run (e.g. a CSV source missing a required column). Bad single records are
    /// quarantined and do not stop the run. `EX_DATAERR`.
    case badInput = 65
    /// A source could not be reached or opened (missing file, unreadable database), or a rule could not run:
    /// the findings may be incomplete. `EX_UNAVAILABLE`.
    case sourceUnavailable = 69
    /// An unexpected internal error (a bug). `EX_SOFTWARE`.
    case internalError = 70
    /// The store or the reports folder could not be written. `EX_IOERR`.
    case ioError = 74
    /// Another run holds the lock; try again later. `EX_TEMPFAIL`.
    case lockHeld = 75
    /// The configuration (or a rule file) is invalid. `EX_CONFIG`.
    case badConfig = 78
    /// Stopped early by SIGINT (Ctrl-C) between batches (128 + SIGINT, the shell's convention). What was
    /// committed is kept; the next run continues from there.
    case interruptedFromTerminal = 130
    /// Stopped early by SIGTERM (systemd stop, `kill`) between batches (128 + SIGTERM). What was committed is
    /// kept; the next run continues from there.
    case interrupted = 143

    public var description: String {
        switch self {
        case .success: return "done, nothing at or above --fail-on"
        case .findings: return "done, findings at or above --fail-on"
        case .usage: return "bad usage"
        case .badInput: return "bad input stopped the run"
        case .sourceUnavailable: return "a source is unreachable or a rule failed"
        case .internalError: return "internal error"
        case .ioError: return "cannot write the store or the reports"
        case .lockHeld: return "another run holds the lock"
        case .badConfig: return "bad configuration"
        case .interruptedFromTerminal: return "stopped early on SIGINT (Ctrl-C)"
        case .interrupted: return "stopped early on SIGTERM"
        }
    }

    /// Whether a finding counts toward `--fail-on`: an active hit (outcome `hit`, status `new` or
    /// `recurring`, not suppressed) of a rule that is not experimental, at or above `failOn`.
    public static func counts(
        _ finding: Finding, failOn: Finding.Level, experimentalRuleIDs: Set<String>
    ) -> Bool {
        finding.outcome == .hit && (finding.status == .new || finding.status == .recurring)
            && finding.suppression == nil && finding.level >= failOn
            && !experimentalRuleIDs.contains(finding.ruleID)
    }

    /// The code for a finished run: `.findings` when any finding counts toward `failOn`, else `.success`.
    /// `failOn == nil` (`--fail-on none`) never fails the run on findings.
    public static func forCompletedRun(
        findings: [Finding], failOn: Finding.Level?, experimentalRuleIDs: Set<String>
    ) -> RunExitCode {
        guard let failOn else { return .success }
        return findings.contains { counts($0, failOn: failOn, experimentalRuleIDs: experimentalRuleIDs) }
            ? .findings : .success
    }

    /// Parses a `--fail-on` value: a level name (`informational`, `low`, `medium`, `high`, `critical`) or
    /// `none`. Returns `.some(nil)` for `none` and `nil` for anything else.
    public static func parseFailOn(_ text: String) -> Finding.Level?? {
        let lower = text.lowercased()
        if lower == "none" { return .some(nil) }
        if let level = Finding.Level(rawValue: lower) { return .some(level) }
        if lower == "info" { return .some(.informational) }
        return nil
    }
}
