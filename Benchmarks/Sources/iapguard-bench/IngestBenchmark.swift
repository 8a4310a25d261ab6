import CSQLiteBench
import Foundation
import IAPGuard

/// Ingest stage: rows/s into the SQLite store (the world's sources, verified), against two floors measured
/// in the same run:
///
/// - the bare prepared insert (raw C API, 1M rows × 9 columns, no index, one transaction, one prepared
///   statement) — the issue's floor, unchanged, compared per record;
/// - the *same-rows* floor: every row the ingest left in each table (sightings, canonical transactions,
///   orders, credits, notifications, change log, quarantine), re-inserted in rowid order by the same bare
///   prepared insert into an empty store made by the same migrations (same columns, same indexes) and pragmas,
///   one transaction per table; a source's floor is the time its rows take there. This compares like with
///   like: an Apple record writes a 37-column sighting and often a 29-column canonical row, each table with
///   two or three secondary indexes and a text primary key, where the 9-column floor writes one unindexed
///   row. Also measured with a commit every 2,000 rows (the pipeline's batch size).
///
/// `IAPGUARD_BENCH_PRAGMAS` (`;`-separated, e.g. `cache_size=-65536;wal_autocheckpoint=10000`) is run on
/// the store's connection before ingest, `IAPGUARD_BENCH_BATCH` sets the batch size (default 2000) and
/// `IAPGUARD_BENCH_ROW_BY_ROW=1` writes through the reference `writeRowByRow` path, to measure each.
/// Leaves the store at `<data>/bench.sqlite` for the rules stage.
enum IngestBenchmark {
    /// The tables a write fills, in the order the same-rows floor re-inserts them.
    static let tables = [
        "apple_sighting", "apple_transaction", "backend_order", "credit", "notification", "change_log", "quarantine",
    ]

    static func run(_ options: BenchOptions) throws {
        let config = try BenchWorld.config(options)
        Measure.header("ingest", "world \(options.worldDirectory.path) into \(storePath(options))")
        let floorRows = 1_000_000
        let floorDefault = try rawInsertFloor(rows: floorRows, options: options, wal: false)
        Measure.line(
            "ingest", "floor: raw C API prepared insert, 1M rows × 9 cols, rollback journal",
            rateText(Double(floorRows), floorDefault))
        let floorWAL = try rawInsertFloor(rows: floorRows, options: options, wal: true)
        Measure.line(
            "ingest", "floor: same, WAL + synchronous=NORMAL (the store's pragmas)",
            rateText(Double(floorRows), floorWAL))
        let floorRate = Double(floorRows) / floorWAL

        let path = storePath(options)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        let store = try SQLiteStore(path: path)
        try store.migrate()
        let environment = ProcessInfo.processInfo.environment
        for pragma in (environment["IAPGUARD_BENCH_PRAGMAS"] ?? "").split(separator: ";") where !pragma.isEmpty {
            try store.database.execute("PRAGMA \(pragma)")
            Measure.line("ingest", "pragma on the store's connection", String(pragma))
        }
        let batchSize = Int(environment["IAPGUARD_BENCH_BATCH"] ?? "") ?? 2000
        let rowByRow = environment["IAPGUARD_BENCH_ROW_BY_ROW"] == "1"
        if rowByRow { Measure.line("ingest", "write path", "writeRowByRow (the reference path)") }
        if batchSize != 2000 { Measure.line("ingest", "batch size", "\(batchSize)") }
        let runID = try store.beginRun(
            RunStart(
                startedAt: 0, windowSince: nil, windowUntil: BenchWorld.now, configHash: config.hash,
                toolVersion: "bench"))
        var reference = config.referenceData
        if let fx = config.fxRatesFile { reference.fxRates = try FXRateFile.load(fx, source: fx.lastPathComponent) }
        try store.replaceReferenceData(reference)
        let verifier = try JWSVerifier.make(for: config)

        struct SourceResult {
            var name: String
            var records: Int
            var seconds: Double
            var writeSeconds: Double
            /// Rows each table gained while this source was ingested.
            var rows: [String: Int]
        }
        var results: [SourceResult] = []
        func tableCounts() throws -> [String: Int] {
            var counts: [String: Int] = [:]
            for table in tables {
                counts[table] = Int(try store.scalar("SELECT COUNT(*) FROM \(table)")?.integerValue ?? 0)
            }
            return counts
        }
        for source in config.sources {
            var records = 0
            var writeSeconds = 0.0
            let before = try tableCounts()
            let ingestor = SourceIngestor(
                source: source, verifier: verifier, configHash: config.hash, batchSize: batchSize)
            let (_, seconds) = try Measure.time {
                _ = try ingestor.ingest(
                    store: store, runID: runID,
                    sink: { batch in
                        let (written, s) = try Measure.time {
                            rowByRow
                                ? try store.writeRowByRow(batch, runID: runID) : try store.write(batch, runID: runID)
                        }
                        writeSeconds += s
                        records += written.records
                    })
            }
            let after = try tableCounts()
            results.append(
                SourceResult(
                    name: "\(source.name) (\(source.kind.rawValue))", records: records, seconds: seconds,
                    writeSeconds: writeSeconds,
                    rows: Dictionary(uniqueKeysWithValues: tables.map { ($0, (after[$0] ?? 0) - (before[$0] ?? 0)) })))
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0

        // The same-rows floor, per table, after the store was written (not timed with it).
        let oneTransaction = try sameRowsFloor(store: path, options: options, commitEvery: nil)
        let batched = try sameRowsFloor(store: path, options: options, commitEvery: 2000)
        for table in tables {
            guard let floor = oneTransaction[table], floor.rows > 0 else { continue }
            let perBatch = batched[table]?.seconds ?? 0
            Measure.line(
                "ingest", "same-rows floor: \(table), \(floor.rows) rows",
                rateText(Double(floor.rows), floor.seconds) + "  (commit every 2,000: "
                    + Measure.rate(Double(floor.rows), perBatch) + ")")
        }
        func floorSeconds(_ rows: [String: Int], _ floors: [String: (rows: Int, seconds: Double)]) -> Double {
            tables.reduce(0.0) { sum, table in
                guard let floor = floors[table], floor.rows > 0 else { return sum }
                return sum + Double(rows[table] ?? 0) * floor.seconds / Double(floor.rows)
            }
        }
        func report(_ name: String, records: Int, seconds: Double, writeSeconds: Double, rows: [String: Int]) {
            let rowCount = rows.values.reduce(0, +)
            let same = floorSeconds(rows, oneTransaction)
            let sameBatched = floorSeconds(rows, batched)
            Measure.line(
                "ingest", "\(name): \(records) records, all of ingest",
                rateText(Double(records), seconds) + "  \(Measure.ratio(Double(records) / seconds, floorRate)) of floor"
            )
            Measure.line(
                "ingest", "  of which store.write (SQLite upserts)",
                rateText(Double(records), writeSeconds)
                    + "  \(Measure.ratio(Double(records) / writeSeconds, floorRate)) of 9-col floor")
            Measure.line(
                "ingest", "  same-rows floor: \(rowCount) rows in the store's tables",
                String(format: "%8.2f s  ", same) + "store.write \(Measure.ratio(same, writeSeconds)) of it"
                    + String(format: "  (commit every 2,000: %.2f s, ", sameBatched)
                    + "\(Measure.ratio(sameBatched, writeSeconds)))")
        }
        var all: [String: Int] = [:]
        for result in results {
            report(
                result.name, records: result.records, seconds: result.seconds, writeSeconds: result.writeSeconds,
                rows: result.rows)
            all.merge(result.rows, uniquingKeysWith: +)
        }
        report(
            "all sources", records: results.reduce(0) { $0 + $1.records },
            seconds: results.reduce(0) { $0 + $1.seconds }, writeSeconds: results.reduce(0) { $0 + $1.writeSeconds },
            rows: all)
        Measure.line("ingest", "store file", Measure.mib(size))
        Measure.line("ingest", "peak RSS of this stage", Measure.mib(Measure.peakRSS()))
    }

    /// Per table of ``tables``: its row count in the store at `store`, and the seconds a bare prepared insert
    /// takes to put those rows (in rowid order, every column) into an empty store made by the same
    /// migrations and pragmas — one transaction, or a commit every `commitEvery` rows. Rows are read in
    /// chunks before each timed part, so reading is not timed.
    static func sameRowsFloor(store: String, options: BenchOptions, commitEvery: Int?) throws
        -> [String: (rows: Int, seconds: Double)]
    {
        let path = options.directory.appendingPathComponent("floor-same-rows.sqlite").path
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        do {
            let empty = try SQLiteStore(path: path)
            try empty.migrate()
        }
        var source: OpaquePointer?
        guard sqlite3_open_v2(store, &source, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let source else {
            throw BenchError("cannot open \(store)")
        }
        defer { sqlite3_close(source) }
        var target: OpaquePointer?
        guard sqlite3_open(path, &target) == SQLITE_OK, let target else { throw BenchError("cannot open \(path)") }
        defer { sqlite3_close(target) }
        func exec(_ sql: String) throws {
            guard sqlite3_exec(target, sql, nil, nil, nil) == SQLITE_OK else {
                throw BenchError("\(sql): \(String(cString: sqlite3_errmsg(target)))")
            }
        }
        // SQLiteStore's pragmas (journal_mode = WAL is kept in the file).
        try exec("PRAGMA synchronous = NORMAL")
        try exec("PRAGMA foreign_keys = OFF")
        func prepare(_ db: OpaquePointer, _ sql: String) throws -> OpaquePointer {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
                throw BenchError("\(sql): \(String(cString: sqlite3_errmsg(db)))")
            }
            return statement
        }
        var floors: [String: (rows: Int, seconds: Double)] = [:]
        for table in tables {
            var columns: [String] = []
            let info = try prepare(source, "PRAGMA table_info(\(table))")
            while sqlite3_step(info) == SQLITE_ROW { columns.append(String(cString: sqlite3_column_text(info, 1))) }
            sqlite3_finalize(info)
            let select = try prepare(source, "SELECT \(columns.joined(separator: ", ")) FROM \(table) ORDER BY rowid")
            defer { sqlite3_finalize(select) }
            let insert = try prepare(
                target,
                "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(Array(repeating: "?", count: columns.count).joined(separator: ", ")))"
            )
            defer { sqlite3_finalize(insert) }
            var rows = 0
            var seconds = 0.0
            var done = false
            var inTransaction = false
            while !done {
                var chunk: [OpaquePointer?] = []
                chunk.reserveCapacity(20_000 * columns.count)
                var chunkRows = 0
                while chunkRows < 20_000 {
                    guard sqlite3_step(select) == SQLITE_ROW else {
                        done = true
                        break
                    }
                    for index in 0..<Int32(columns.count) {
                        chunk.append(sqlite3_value_dup(sqlite3_column_value(select, index)))
                    }
                    chunkRows += 1
                }
                defer { for value in chunk { sqlite3_value_free(value) } }
                let (_, s) = try Measure.time {
                    for row in 0..<chunkRows {
                        if !inTransaction {
                            try exec("BEGIN")
                            inTransaction = true
                        }
                        for index in 0..<columns.count {
                            sqlite3_bind_value(insert, Int32(index + 1), chunk[row * columns.count + index])
                        }
                        guard sqlite3_step(insert) == SQLITE_DONE else {
                            throw BenchError("insert into \(table): \(String(cString: sqlite3_errmsg(target)))")
                        }
                        sqlite3_reset(insert)
                        rows += 1
                        if let commitEvery, rows % commitEvery == 0 {
                            try exec("COMMIT")
                            inTransaction = false
                        }
                    }
                    if done, inTransaction {
                        try exec("COMMIT")
                        inTransaction = false
                    }
                }
                seconds += s
            }
            floors[table] = (rows, seconds)
        }
        return floors
    }

    static func storePath(_ options: BenchOptions) -> String {
        options.directory.appendingPathComponent("bench.sqlite").path
    }

    static func rateText(_ rows: Double, _ seconds: Double) -> String {
        String(format: "%8.2f s  ", seconds) + Measure.rate(rows, seconds) + " rows"
    }

    /// Seconds to insert `rows` rows of 9 columns (text ids and integers, like an order row) through one
    /// prepared statement in one transaction, with nothing else.
    static func rawInsertFloor(rows: Int, options: BenchOptions, wal: Bool) throws -> Double {
        let path = options.directory.appendingPathComponent("floor.sqlite").path
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK, let db else { throw BenchError("cannot open \(path)") }
        defer { sqlite3_close(db) }
        func exec(_ sql: String) throws {
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
                throw BenchError("\(sql): \(String(cString: sqlite3_errmsg(db)))")
            }
        }
        if wal {
            try exec("PRAGMA journal_mode = WAL")
            try exec("PRAGMA synchronous = NORMAL")
        }
        try exec(
            "CREATE TABLE t (order_id TEXT, user_id TEXT, bundle_id TEXT, product_id TEXT, quantity INTEGER, "
                + "price INTEGER, currency TEXT, transaction_id TEXT, created_at INTEGER)")
        var statement: OpaquePointer?
        guard
            sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &statement, nil)
                == SQLITE_OK, let statement
        else { throw BenchError("prepare failed") }
        defer { sqlite3_finalize(statement) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        let (_, seconds) = try Measure.time {
            try exec("BEGIN")
            for index in 0..<rows {
                let order = "o-\(index)"
                let user = "u-\(index % 100_000)"
                let transaction = "2000000\(index)"
                sqlite3_bind_text(statement, 1, order, -1, transient)
                sqlite3_bind_text(statement, 2, user, -1, transient)
                sqlite3_bind_text(statement, 3, "com.example.coins", -1, transient)
                sqlite3_bind_text(statement, 4, "com.example.coins.pack100", -1, transient)
                sqlite3_bind_int64(statement, 5, 1)
                sqlite3_bind_int64(statement, 6, 990)
                sqlite3_bind_text(statement, 7, "USD", -1, transient)
                sqlite3_bind_text(statement, 8, transaction, -1, transient)
                sqlite3_bind_int64(statement, 9, 1_780_000_000_000 + Int64(index))
                guard sqlite3_step(statement) == SQLITE_DONE else {
                    throw BenchError("insert failed: \(String(cString: sqlite3_errmsg(db)))")
                }
                sqlite3_reset(statement)
            }
            try exec("COMMIT")
        }
        return seconds
    }
}
