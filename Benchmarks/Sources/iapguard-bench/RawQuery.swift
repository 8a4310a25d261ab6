import CSQLiteBench
import Dispatch
import Foundation
import IAPGuard

/// A rule query run on its own read-only connection through the C API, with a time limit (SQLite's
/// progress handler interrupts it), so one slow rule cannot stall the whole benchmark.
enum RawQuery {
    struct Outcome {
        var rows = 0
        var seconds = 0.0
        var timedOut = false
        var error: String?
    }

    static func run(path: String, sql: String, parameters: [String: SQLValue], limit: Double) -> Outcome {
        var outcome = Outcome()
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let db else {
            outcome.error = "cannot open \(path)"
            return outcome
        }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            outcome.error = String(cString: sqlite3_errmsg(db))
            return outcome
        }
        defer { sqlite3_finalize(statement) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for index in 0..<sqlite3_bind_parameter_count(statement) {
            guard let cName = sqlite3_bind_parameter_name(statement, index + 1) else { continue }
            let name = String(cString: cName).dropFirst()
            switch parameters[String(name)] {
            case .integer(let value)?: sqlite3_bind_int64(statement, index + 1, value)
            case .real(let value)?: sqlite3_bind_double(statement, index + 1, value)
            case .text(let value)?: sqlite3_bind_text(statement, index + 1, value, -1, transient)
            default: sqlite3_bind_null(statement, index + 1)
            }
        }
        let deadline = UnsafeMutablePointer<UInt64>.allocate(capacity: 1)
        defer { deadline.deallocate() }
        deadline.pointee = DispatchTime.now().uptimeNanoseconds + UInt64(limit * 1e9)
        sqlite3_progress_handler(
            db, 100_000,
            { context in
                guard let context else { return 0 }
                let end = context.assumingMemoryBound(to: UInt64.self).pointee
                return DispatchTime.now().uptimeNanoseconds > end ? 1 : 0
            }, deadline)
        let start = DispatchTime.now().uptimeNanoseconds
        while true {
            let rc = sqlite3_step(statement)
            if rc == SQLITE_ROW {
                outcome.rows += 1
                continue
            }
            if rc == SQLITE_INTERRUPT {
                outcome.timedOut = true
            } else if rc != SQLITE_DONE {
                outcome.error = String(cString: sqlite3_errmsg(db))
            }
            break
        }
        outcome.seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        return outcome
    }
}
