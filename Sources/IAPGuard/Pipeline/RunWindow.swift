import Foundation

/// The half-open time window `[since, until)` of one run, in epoch milliseconds UTC.
///
/// `until` is the rules' "now" (grace periods end before it); it defaults to the wall clock. `since`
/// defaults to the stored watermark — the `until` of the latest successful run whose window ended before
/// this one — minus the configured look-back (`lookback_hours`), because refunds and late credits arrive
/// days after the purchase. Without an earlier successful run (or with `--full-rebuild`) the window starts
/// at the beginning of history (`since == nil`). Re-running the same `--until` therefore resolves to the
/// same window, whatever ran in between.
public struct RunWindow: Sendable, Hashable, Codable {
    public var since: Int64?
    public var until: Int64
    /// The watermark the default `since` was derived from, if any.
    public var watermark: Int64?

    public init(since: Int64?, until: Int64, watermark: Int64?) {
        self.since = since
        self.until = until
        self.watermark = watermark
    }

    /// Resolves the window of a run from the options, the store's run records and the wall clock.
    static func resolve(
        options: Pipeline.Options, store: any SQLBackedStore, lookbackHours: Int64, now: Int64
    ) throws -> RunWindow {
        // A report folder is named after `until` to the second: two windows ending in the same second would
        // write one folder.
        if let until = options.until, until % 1000 != 0 {
            throw WindowError(message: "--until must be a whole second (report folders are named to the second)")
        }
        let until = options.until ?? now
        let rewind = FindingRewind(database: store.connection)
        try rewind.checkRewindable(until: until)
        let watermark = try
            (store.connection.query(
                "SELECT MAX(window_until) FROM run WHERE status = 'ok' AND window_until < ?", [.integer(until)]
            ).first?.first)?.integerValue
        if let since = options.since {
            guard since < until else {
                throw WindowError(message: "--since must be before --until (the window is [since, until))")
            }
            return RunWindow(since: since, until: until, watermark: watermark)
        }
        if options.fullRebuild { return RunWindow(since: nil, until: until, watermark: watermark) }
        let since = watermark.map { $0 - lookbackHours * 3_600_000 }
        return RunWindow(since: since, until: until, watermark: watermark)
    }

    /// The id of this window's report: `until` as UTC digits `yyyyMMddHHmmss` (`20250301000000`). Report
    /// folders and `history.jsonl` lines are keyed by it, so re-running a window replaces its report and
    /// later windows sort after earlier ones.
    public var reportID: Int64 { Self.reportID(until: until) }

    /// The report id of a window ending at `until`.
    public static func reportID(until: Int64) -> Int64 {
        let seconds = until >= 0 ? until / 1000 : (until - 999) / 1000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = CivilDate.date(days: days)
        let time = (secondOfDay / 3600) * 10_000 + (secondOfDay % 3600 / 60) * 100 + secondOfDay % 60
        return ((year * 100 + month) * 100 + day) * 1_000_000 + time
    }

}

/// A window that cannot be used (`--since` not before `--until`, or too old to re-evaluate).
public struct WindowError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}
