import Foundation
import PostgresNIO

/// Writes one ingest batch on PostgreSQL with `COPY` where it pays, with the same results as
/// ``SQLBackedStore/writeRowByRow(_:runID:)``.
///
/// One query per table finds which keys of the batch already exist. The first copy of each new order,
/// credit and sighting — and the canonical transaction of a transaction seen once in the batch and never
/// before — is streamed with `COPY … FROM STDIN`; everything else (existing keys, repeats inside the batch,
/// transactions with several sightings) goes through the row-by-row statements in batch order, so
/// precedence, `change_log` and counts come out as on SQLite. Runs inside the caller's transaction.
struct PostgresBulkWriter {
    let store: PostgresStore
    let runID: Int64

    private var session: PostgresSession { store.session }

    func write(_ batch: IngestBatch) throws -> WriteCounts {
        var counts = WriteCounts()
        counts = counts + (try writeSightings(batch.sightings))
        counts =
            counts
            + (try writeKeyed(
                StoreRecords.orderTable,
                rows: batch.orders.map { (StoreRecords.values(of: $0.order), $0.sourceName, $0.sourceRef) }))
        counts =
            counts
            + (try writeKeyed(
                StoreRecords.creditTable,
                rows: batch.credits.filter { !$0.credit.isClawback }.map {
                    (StoreRecords.values(of: $0.credit), $0.sourceName, $0.sourceRef)
                }))
        counts =
            counts
            + (try writeKeyed(
                StoreRecords.clawbackTable,
                rows: batch.credits.filter { $0.credit.isClawback }.map {
                    (StoreRecords.clawbackValues(of: $0.credit), $0.sourceName, $0.sourceRef)
                }))
        for notification in batch.notifications {
            counts = counts + (try store.writeNotification(notification, runID: runID))
        }
        counts =
            counts
            + (try writeKeyed(
                StoreRecords.userTable,
                rows: batch.users.map { (StoreRecords.values(of: $0.user), $0.sourceName, $0.sourceRef) }))
        for record in batch.quarantined { counts = counts + (try store.writeQuarantine(record, runID: runID)) }
        return counts
    }

    // MARK: Orders and credits

    private func writeKeyed(
        _ table: StoreRecords.KeyedTable,
        rows: [(values: [SQLValue], sourceName: String, sourceRef: String)]
    ) throws -> WriteCounts {
        guard !rows.isEmpty else { return WriteCounts() }
        let keys = rows.map { $0.values[0].textValue ?? "" }
        let existing = try existingKeys(table: table.name, column: table.columns[0], keys: keys)
        var seen = Set<String>()
        var fresh: [[SQLValue]] = []
        var rest: [Int] = []
        for (index, row) in rows.enumerated() {
            let key = keys[index]
            if !existing.contains(key), seen.insert(key).inserted {
                fresh.append(
                    row.values + [
                        .text(row.sourceName), .text(row.sourceRef), .text(StoreRecords.rowHash(row.values)),
                        .integer(runID), .integer(runID),
                    ])
            } else {
                rest.append(index)
            }
        }
        var counts = WriteCounts()
        if !fresh.isEmpty {
            try copy(
                table: table.name,
                columns: table.columns + ["source_name", "source_ref", "row_hash", "first_run_id", "last_run_id"],
                rows: fresh)
            counts.records += fresh.count
            counts.inserted += fresh.count
        }
        for index in rest {
            let row = rows[index]
            counts =
                counts
                + (try store.upsertRow(
                    table, values: row.values, sourceName: row.sourceName, sourceRef: row.sourceRef, runID: runID))
        }
        return counts
    }

    // MARK: Sightings

    private func writeSightings(_ sightings: [AppleSighting]) throws -> WriteCounts {
        guard !sightings.isEmpty else { return WriteCounts() }
        // A sighting id is a SHA-256 over the whole transaction: computed once per sighting.
        let ids = sightings.map(\.sightingID)
        let existingSightings = try existingKeys(table: "apple_sighting", column: "sighting_id", keys: ids)
        var seen = Set<String>()
        var fresh: [(sighting: AppleSighting, id: String)] = []
        var counts = WriteCounts()
        for (sighting, id) in zip(sightings, ids) {
            if !existingSightings.contains(id), seen.insert(id).inserted {
                fresh.append((sighting, id))
                counts = counts + StoreRecords.one(inserted: true)
            } else {
                counts = counts + StoreRecords.one()
            }
        }
        guard !fresh.isEmpty else { return counts }
        try copy(
            table: "apple_sighting", columns: StoreRecords.sightingColumns,
            rows: fresh.map {
                StoreRecords.values(
                    of: $0.sighting, sightingID: $0.id,
                    transactionValues: StoreRecords.values(of: $0.sighting.transaction),
                    runID: runID)
            })

        // Canonical rows: failed sightings never count.
        let canonical = fresh.filter { $0.sighting.verification.status != .failed }
        let existingTransactions = try existingKeys(
            table: "apple_transaction", column: "transaction_id",
            keys: canonical.map(\.sighting.transaction.transactionID))
        var perTransaction: [String: Int] = [:]
        for entry in canonical { perTransaction[entry.sighting.transaction.transactionID, default: 0] += 1 }
        var direct: [[SQLValue]] = []
        for (sighting, sightingID) in canonical {
            let id = sighting.transaction.transactionID
            let transactionValues = StoreRecords.values(of: sighting.transaction)
            if !existingTransactions.contains(id), perTransaction[id] == 1 {
                direct.append(
                    transactionValues
                        + StoreRecords.canonicalValues(of: sighting, sightingID: sightingID, runID: runID))
            } else {
                try store.mergeCanonical(
                    sighting, sightingID: sightingID, transactionValues: transactionValues, runID: runID)
            }
        }
        if !direct.isEmpty {
            try copy(
                table: "apple_transaction", columns: StoreRecords.transactionColumns + StoreRecords.canonicalColumns,
                rows: direct)
            // A reversal stored before this first copy of a revoked transaction still applies to it.
            for (sighting, _) in canonical where StoreRecords.carriesRevocation(sighting.transaction) {
                let id = sighting.transaction.transactionID
                if !existingTransactions.contains(id), perTransaction[id] == 1 {
                    try store.applyRefundReversal(id, runID: runID)
                }
            }
        }
        return counts
    }

    // MARK: Wire

    /// Which of `keys` already exist in `table.column` (one round trip).
    private func existingKeys(table: String, column: String, keys: [String]) throws -> Set<String> {
        guard !keys.isEmpty else { return [] }
        var bindings = PostgresBindings()
        bindings.append(Array(Set(keys)))
        let sql = "SELECT \(column) FROM \(table) WHERE \(column) = ANY($1)"
        let result = try session.send(PostgresQuery(unsafeSQL: sql, binds: bindings), sql: sql)
        return Set(try result.rows.compactMap { row in try row.first.map(PostgresSession.value)?.textValue })
    }

    /// Streams `rows` into `table` with `COPY … FROM STDIN` (text format).
    private func copy(table: String, columns: [String], rows: [[SQLValue]]) throws {
        var text = ""
        text.reserveCapacity(rows.count * 256)
        for row in rows {
            for (index, value) in row.enumerated() {
                if index > 0 { text += "\t" }
                text += Self.copyField(value)
            }
            text += "\n"
        }
        try PostgresCopy.run(
            connection: session.connection, table: table, columns: columns, data: text, logger: session.logger)
    }

    /// One field in COPY's text format: `\N` for NULL; backslash, tab, newline and carriage return escaped.
    static func copyField(_ value: SQLValue) -> String {
        switch value {
        case .null: return "\\N"
        case .integer(let v): return String(v)
        case .real(let v): return "\(v)"
        case .text(let s):
            guard s.unicodeScalars.contains(where: { $0 == "\\" || $0 == "\t" || $0 == "\n" || $0 == "\r" }) else {
                return s
            }
            var escaped = ""
            for c in s.unicodeScalars {
                switch c {
                case "\\": escaped += "\\\\"
                case "\t": escaped += "\\t"
                case "\n": escaped += "\\n"
                case "\r": escaped += "\\r"
                default: escaped.unicodeScalars.append(c)
                }
            }
            return escaped
        }
    }
}
