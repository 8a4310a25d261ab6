import Foundation

/// Makes re-running a window deterministic: a run's findings are judged (new, recurring, resolved)
/// against the state left by the runs of *earlier* windows, never by an earlier run of the same (or a
/// later) window.
///
/// Before the rule stage persists a run's findings it keeps the previous state of every `finding` row the
/// run is about to change in the pipeline's private table `finding_undo` (one JSON image per row, `NULL`
/// when the row did not exist); for the findings an incremental run carries over unchanged, only their status
/// and run ids move, and `finding_undo_carry` keeps those (written set-based, one statement per run). When a later run has a window ending at or before the `until` of such a
/// run, it first rewinds that run: restores the images (newest run first), deletes the run's
/// `finding_run` and `rule_run` rows, and marks the run `superseded`. All of this happens inside the rule
/// stage's transaction, so a crash leaves either the old or the new state.
///
/// Undo images are kept for runs whose window ended within the rewind horizon (`rewind_horizon_days`) of
/// the latest evaluated window; older ones are deleted by ``prune(horizon:latestUntil:)`` and the end of
/// the newest pruned window is kept in `finding_undo_pruned`, so a window that would need them is refused
/// (``checkRewindable(until:)``) instead of being evaluated against the wrong state. The tables are created by
/// the store's migrations (`FindingUndoSchema`).
struct FindingRewind {
    let database: any SQLExecutor

    /// The end of the newest window whose undo images were pruned, if any.
    func prunedThrough() throws -> Int64? {
        try database.query("SELECT MAX(pruned_through) FROM finding_undo_pruned", []).first?.first?.integerValue
    }

    /// Throws a ``WindowError`` when a window ending at `until` would have to rewind a run whose undo images
    /// were pruned.
    func checkRewindable(until: Int64) throws {
        guard let through = try prunedThrough(), until <= through else { return }
        throw WindowError(
            message:
                "the window ending \(TimeParser.iso8601(until)) cannot be re-evaluated any more: later windows (up to "
                + "\(TimeParser.iso8601(through))) are older than rewind_horizon_days, so their findings can no "
                + "longer be rewound; use a later --until")
    }

    /// Deletes the undo images of runs whose window ended more than `horizon` milliseconds before the
    /// latest evaluated window end (`latestUntil` or a stored run's, whichever is later). Returns the
    /// number of images deleted.
    @discardableResult
    func prune(horizon: Int64, latestUntil: Int64) throws -> Int {
        let stored = try database.query(
            "SELECT MAX(window_until) FROM run WHERE status IN ('ok', 'partial')", []
        ).first?.first?.integerValue
        let cutoff = max(latestUntil, stored ?? latestUntil) - horizon
        let runs = try database.query(
            """
            SELECT r.run_id, r.window_until FROM run r
            WHERE r.window_until < ?
              AND (r.run_id IN (SELECT run_id FROM finding_undo) OR r.run_id IN (SELECT run_id FROM finding_undo_carry))
            ORDER BY r.run_id
            """, [.integer(cutoff)]
        )
        guard !runs.isEmpty else { return 0 }
        var deleted = 0
        var through = try prunedThrough() ?? Int64.min
        for row in runs {
            guard let runID = row[0].integerValue, let until = row[1].integerValue else { continue }
            for table in ["finding_undo", "finding_undo_carry"] {
                deleted += Int(
                    try database.query("SELECT COUNT(*) FROM \(table) WHERE run_id = ?", [.integer(runID)])
                        .first?.first?.integerValue ?? 0)
                try database.run("DELETE FROM \(table) WHERE run_id = ?", [.integer(runID)])
            }
            through = max(through, until)
        }
        try database.run("DELETE FROM finding_undo_pruned", [])
        try database.run("INSERT INTO finding_undo_pruned (pruned_through) VALUES (?)", [.integer(through)])
        return deleted
    }

    /// The columns of the `finding` table, read from the schema so later migrations are covered.
    func findingColumns() throws -> [String] {
        try database.columnNames(of: "finding")
    }

    /// The runs ``rewind(runsEndingAtOrAfter:currentRunID:)`` would rewind, newest first, without
    /// rewinding them.
    func runsToRewind(endingAtOrAfter until: Int64, currentRunID: Int64) throws -> [Int64] {
        try database.query(
            """
            SELECT run_id FROM run
            WHERE run_id <> ? AND window_until >= ?
              AND (status IN ('ok', 'partial') OR run_id IN (SELECT run_id FROM finding_undo)
                   OR run_id IN (SELECT run_id FROM finding_undo_carry))
            ORDER BY run_id DESC
            """, [.integer(currentRunID), .integer(until)]
        ).compactMap { $0[0].integerValue }
    }

    /// Rewinds every run (other than `currentRunID`) that finished its rule stage and whose window ends
    /// at or after `until`. Returns the run ids rewound, newest first.
    @discardableResult
    func rewind(runsEndingAtOrAfter until: Int64, currentRunID: Int64) throws -> [Int64] {
        let runs = try runsToRewind(endingAtOrAfter: until, currentRunID: currentRunID)
        guard !runs.isEmpty else { return [] }
        let columns = try findingColumns()
        let restore =
            "INSERT INTO finding (\(columns.joined(separator: ", "))) VALUES ("
            + columns.map { _ in "?" }.joined(separator: ", ") + ") ON CONFLICT (finding_id) DO UPDATE SET "
            + columns.filter { $0 != "finding_id" }.map { "\($0) = excluded.\($0)" }.joined(separator: ", ")
        for runID in runs {
            for row in try database.query(
                "SELECT finding_id, pre_image FROM finding_undo WHERE run_id = ? ORDER BY finding_id", [.integer(runID)]
            ) {
                if let image = row[1].textValue {
                    try database.run(restore, try Self.decode(image, columns: columns))
                } else {
                    try database.run("DELETE FROM finding WHERE finding_id = ?", [row[0]])
                }
            }
            // Carried-over rows: only their status and run ids moved (after the images: for a row with both,
            // the carry record holds the older values of these columns).
            try database.run(
                """
                UPDATE finding SET
                    status = (SELECT u.status FROM finding_undo_carry u
                              WHERE u.run_id = ? AND u.finding_id = finding.finding_id),
                    last_seen_run_id = (SELECT u.last_seen_run_id FROM finding_undo_carry u
                                        WHERE u.run_id = ? AND u.finding_id = finding.finding_id),
                    last_run_id = (SELECT u.last_run_id FROM finding_undo_carry u
                                   WHERE u.run_id = ? AND u.finding_id = finding.finding_id)
                WHERE finding_id IN (SELECT finding_id FROM finding_undo_carry WHERE run_id = ?)
                """, [.integer(runID), .integer(runID), .integer(runID), .integer(runID)])
            for table in ["finding_run", "rule_run", "finding_undo", "finding_undo_carry"] {
                try database.run("DELETE FROM \(table) WHERE run_id = ?", [.integer(runID)])
            }
            try database.run("UPDATE run SET status = 'superseded' WHERE run_id = ?", [.integer(runID)])
        }
        return runs
    }

    /// Keeps the current image of each finding row `runID` is about to write (the first image wins when
    /// a run is resumed after a crash: it is the state before the run).
    func remember(findingIDs: [String], runID: Int64) throws {
        let columns = try findingColumns()
        guard let idColumn = columns.firstIndex(of: "finding_id") else {
            throw StoreError(message: "finding has no finding_id column")
        }
        let ids = Set(findingIDs).sorted()
        // The rows are read in chunks of bound ids (one index probe each, not one statement per finding):
        // a full evaluation over a store that holds its findings remembers every one of them.
        var start = 0
        while start < ids.count {
            let chunk = ids[start..<min(start + Self.idsPerStatement, ids.count)]
            let placeholders = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            var images: [String: String] = [:]
            for row in try database.query(
                "SELECT \(columns.joined(separator: ", ")) FROM finding WHERE finding_id IN (\(placeholders))",
                chunk.map { .text($0) })
            {
                if let id = row[idColumn].textValue { images[id] = Self.encode(row, columns: columns) }
            }
            for id in chunk {
                try database.run(
                    """
                    INSERT INTO finding_undo (run_id, finding_id, pre_image) VALUES (?, ?, ?)
                    ON CONFLICT (run_id, finding_id) DO NOTHING
                    """, [.integer(runID), .text(id), .of(images[id])])
            }
            start += chunk.count
        }
    }

    /// Bound ids per statement (well under SQLite's and PostgreSQL's parameter limits).
    static let idsPerStatement = 500

    /// Keeps, set-based, the status and run ids of each finding staged in `finding_carry` (the findings
    /// `runID` carries over: only these columns change), unless the run already keeps a full image of it.
    func rememberCarried(runID: Int64) throws {
        try database.run(
            """
            INSERT INTO finding_undo_carry (run_id, finding_id, status, last_seen_run_id, last_run_id)
            SELECT ?, f.finding_id, f.status, f.last_seen_run_id, f.last_run_id FROM finding f
            WHERE f.finding_id IN (SELECT finding_id FROM finding_carry)
              AND NOT EXISTS (SELECT 1 FROM finding_undo u WHERE u.run_id = ? AND u.finding_id = f.finding_id)
            ON CONFLICT (run_id, finding_id) DO NOTHING
            """, [.integer(runID), .integer(runID)])
    }

    /// A row as JSON text: column → `{"i": n}`, `{"r": x}`, `{"s": "…"}` or null, so
    /// the exact SQL types come back on restore, on any engine.
    static func encode(_ row: [SQLValue], columns: [String]) -> String {
        fastEncode(row, columns: columns) ?? serializationEncode(row, columns: columns)
    }

    /// ``encode(_:columns:)`` written directly (keys sorted, as `JSONSerialization` with `.sortedKeys`
    /// orders them) when every column name and text is printable ASCII and every real is finite; nil
    /// otherwise, and `JSONSerialization` writes it. `JSONSerialization` took about a millisecond per finding
    /// (its evidence text included), which a full re-evaluation of 33,000 stored findings paid 39 s for.
    static func fastEncode(_ row: [SQLValue], columns: [String]) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(1024)
        func appendString(_ text: String) -> Bool {
            out.append(UInt8(ascii: "\""))
            for byte in text.utf8 {
                guard byte >= 0x20, byte < 0x7F else { return false }
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { out.append(UInt8(ascii: "\\")) }
                out.append(byte)
            }
            out.append(UInt8(ascii: "\""))
            return true
        }
        out.append(UInt8(ascii: "{"))
        var first = true
        for (column, value) in zip(columns, row).sorted(by: { $0.0 < $1.0 }) {
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            guard appendString(column) else { return nil }
            out.append(UInt8(ascii: ":"))
            switch value {
            case .null:
                out.append(contentsOf: "null".utf8)
            case .integer(let v):
                out.append(contentsOf: #"{"i":"#.utf8)
                out.append(contentsOf: String(v).utf8)
                out.append(UInt8(ascii: "}"))
            case .real(let v):
                guard v.isFinite else { return nil }
                out.append(contentsOf: #"{"r":"#.utf8)
                out.append(contentsOf: "\(v)".utf8)
                out.append(UInt8(ascii: "}"))
            case .text(let v):
                out.append(contentsOf: #"{"s":"#.utf8)
                guard appendString(v) else { return nil }
                out.append(UInt8(ascii: "}"))
            }
        }
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }

    static func serializationEncode(_ row: [SQLValue], columns: [String]) -> String {
        var object: [String: Any] = [:]
        for (column, value) in zip(columns, row) {
            switch value {
            case .null: object[column] = NSNull()
            case .integer(let v): object[column] = ["i": v]
            case .real(let v): object[column] = ["r": v]
            case .text(let v): object[column] = ["s": v]
            }
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// The values of `columns` from an image made by ``encode(_:columns:)`` (either writer), read with the
    /// strict byte parser: `JSONSerialization` read some reals back a last digit off, so a rewound finding's
    /// amounts could differ from the ones it had.
    static func decode(_ image: String, columns: [String]) throws -> [SQLValue] {
        guard let document = try? JSONDocument.parse(Array(image.utf8)), document.kind(0) == .object else {
            throw StoreError(message: "finding_undo: a pre-image is not a JSON object")
        }
        return columns.map { column in
            guard let cell = document.member(column, inObject: 0), document.kind(cell) == .object else {
                return .null
            }
            if let value = document.member("i", inObject: cell) {
                switch document.kind(value) {
                case .integer: return .integer(document.tape[value].integer)
                case .number: return Int64(exactly: document.double(at: value)).map { .integer($0) } ?? .null
                default: return .null
                }
            }
            if let value = document.member("r", inObject: cell) {
                switch document.kind(value) {
                case .integer, .number: return .real(document.double(at: value))
                default: return .null
                }
            }
            if let value = document.member("s", inObject: cell) {
                switch document.kind(value) {
                case .string, .escapedString: return .text(document.string(at: value))
                default: return .null
                }
            }
            return .null
        }
    }
}
