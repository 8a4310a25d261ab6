import CSQLiteBench
import Foundation
import IAPGuard

/// Ingest stage: rows/s into the SQLite store (the world's sources, verified), against the bare prepared
/// insert floor (raw C API, 1M rows × 9 columns, one transaction, one prepared statement) measured in the
/// same run. Leaves the store at `<data>/bench.sqlite` for the rules stage.
enum IngestBenchmark {
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
        let runID = try store.beginRun(
            RunStart(
                startedAt: 0, windowSince: nil, windowUntil: BenchWorld.now, configHash: config.hash,
                toolVersion: "bench"))
        var reference = config.referenceData
        if let fx = config.fxRatesFile { reference.fxRates = try FXRateFile.load(fx, source: fx.lastPathComponent) }
        try store.replaceReferenceData(reference)
        let verifier = try JWSVerifier.make(for: config)

        var totalRecords = 0
        var totalSeconds = 0.0
        var totalWrite = 0.0
        for source in config.sources {
            var records = 0
            var writeSeconds = 0.0
            let ingestor = SourceIngestor(source: source, verifier: verifier, configHash: config.hash)
            let (_, seconds) = try Measure.time {
                _ = try ingestor.ingest(
                    store: store, runID: runID,
                    sink: { batch in
                        let (written, s) = try Measure.time { try store.write(batch, runID: runID) }
                        writeSeconds += s
                        records += written.records
                    })
            }
            totalRecords += records
            totalSeconds += seconds
            totalWrite += seconds > 0 ? writeSeconds : 0
            Measure.line(
                "ingest", "\(source.name) (\(source.kind.rawValue)): \(records) records, all of ingest",
                rateText(Double(records), seconds) + "  \(Measure.ratio(Double(records) / seconds, floorRate)) of floor"
            )
            Measure.line(
                "ingest", "  of which store.write (SQLite upserts)",
                rateText(Double(records), writeSeconds)
                    + "  \(Measure.ratio(Double(records) / writeSeconds, floorRate)) of floor")
        }
        Measure.line(
            "ingest", "all sources: \(totalRecords) records",
            rateText(Double(totalRecords), totalSeconds)
                + "  \(Measure.ratio(Double(totalRecords) / totalSeconds, floorRate)) of floor")
        Measure.line(
            "ingest", "  of which store.write",
            rateText(Double(totalRecords), totalWrite)
                + "  \(Measure.ratio(Double(totalRecords) / totalWrite, floorRate)) of floor")
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
        Measure.line("ingest", "store file", Measure.mib(size))
        Measure.line("ingest", "peak RSS of this stage", Measure.mib(Measure.peakRSS()))
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
