/// The process exit codes (also in `docs/operations.md` and `--help`).
enum ExitCodes {
    static let ok: Int32 = 0
    static let findings: Int32 = 2
    static let usage: Int32 = 64
    static let badInput: Int32 = 65
    static let sourceUnreachable: Int32 = 69
    static let locked: Int32 = 75
    static let badConfig: Int32 = 78

    static let help = """
        Exit codes: 0 done, nothing at or above --fail-on; 2 done, findings at or above --fail-on; \
        64 bad usage; 65 bad input stopped the run; 69 a source could not be read; 75 another run holds \
        the lock; 78 bad config.
        """
}
