import Foundation

/// A store whose tables live in a SQL database reached through a ``SQLExecutor``: the shared, portable
/// implementation of ``PurchaseStore`` and ``FindingStore`` behind ``SQLiteStore`` and ``PostgresStore``.
///
/// Writes are idempotent: a record already stored with the same content changes nothing; a record whose
/// content changed (an order paid later, a refund on a transaction) is updated and every changed field is
/// logged in `change_log`. The canonical `apple_transaction` row is the best sighting by verification
/// precedence, then recency. The statements are written once with `?` placeholders; the connection's
/// ``SQLDialect`` rewrites them where the engine needs it.
public protocol SQLBackedStore: PurchaseStore, FindingStore, RunLedger {
    /// The connection every statement runs on.
    var connection: any SQLExecutor { get }
}

extension SQLBackedStore {
    /// The connection's dialect.
    public var dialect: SQLDialect { connection.dialect }

    // MARK: Migrations

    public func migrate() throws {
        try connection.execute(
            dialect.ddl(
                """
                CREATE TABLE IF NOT EXISTS schema_migration (
                    version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)
                """))
        let applied = Set(
            try connection.query("SELECT version FROM schema_migration", []).compactMap { $0.first?.integerValue })
        // Migrations only move forward: a store a newer binary migrated is never written by an older one.
        if let newest = applied.max(), newest > Int64(Schema.latestVersion) {
            throw StoreError(
                message:
                    "the store was written by a newer iapguard (schema \(newest); this binary knows \(Schema.latestVersion)): run the newer binary, or restore the backup taken before the upgrade"
            )
        }
        let pending = Schema.migrations.filter { !applied.contains(Int64($0.version)) }
        // A migration may drop or rebuild an index a killed first load left deferred: build those first.
        if !pending.isEmpty, applied.contains(Int64(DeferredIndexSchema.migration.version)) { try finishBulkLoad() }
        for migration in pending {
            try connection.transaction {
                try connection.execute(dialect.ddl(migration.sql))
                try migration.backfill?(connection)
                try connection.run(
                    "INSERT INTO schema_migration (version, name, applied_at) VALUES (?, ?, ?)",
                    [.integer(Int64(migration.version)), .text(migration.name), .integer(Clock.nowMillis())])
            }
        }
    }

    /// The schema version currently applied.
    public func schemaVersion() throws -> Int {
        Int(try connection.query("SELECT MAX(version) FROM schema_migration", []).first?.first?.integerValue ?? 0)
    }

    // MARK: Runs

    public func beginRun(_ start: RunStart) throws -> Int64 {
        let rows = try connection.query(
            """
            INSERT INTO run (started_at, status, window_since, window_until, config_hash, tool_version)
            VALUES (?, 'running', ?, ?, ?, ?) RETURNING run_id
            """,
            [
                .integer(start.startedAt), .of(start.windowSince), .of(start.windowUntil), .text(start.configHash),
                .text(start.toolVersion),
            ])
        guard let id = rows.first?.first?.integerValue else {
            throw StoreError(message: "the store returned no run id")
        }
        return id
    }

    public func finishRun(_ runID: Int64, status: String, finishedAt: Int64, summaryJSON: String?) throws {
        try connection.run(
            "UPDATE run SET status = ?, finished_at = ?, summary_json = ? WHERE run_id = ?",
            [.text(status), .integer(finishedAt), .of(summaryJSON), .integer(runID)])
    }

    public func recordSourceCounts(runID: Int64, sourceName: String, sourceKind: String, counts: WriteCounts) throws {
        try connection.run(
            """
            INSERT INTO run_source (run_id, source_name, source_kind, records, inserted, updated, unchanged, errors, files_skipped)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (run_id, source_name) DO UPDATE SET
                records = run_source.records + excluded.records,
                inserted = run_source.inserted + excluded.inserted,
                updated = run_source.updated + excluded.updated,
                unchanged = run_source.unchanged + excluded.unchanged,
                errors = run_source.errors + excluded.errors,
                files_skipped = run_source.files_skipped + excluded.files_skipped
            """,
            [
                .integer(runID), .text(sourceName), .text(sourceKind), .integer(Int64(counts.records)),
                .integer(Int64(counts.inserted)), .integer(Int64(counts.updated)), .integer(Int64(counts.unchanged)),
                .integer(Int64(counts.errors)), .integer(Int64(counts.filesSkipped)),
            ])
    }

    // MARK: Reference data

    public func replaceReferenceData(_ data: ReferenceData) throws {
        try connection.transaction {
            for table in ["ref_app", "ref_product", "ref_tester", "ref_fx_rate"] {
                try connection.run("DELETE FROM \(table)", [])
            }
            for app in data.apps {
                try connection.run(
                    "INSERT INTO ref_app (bundle_id, app_apple_id, environments) VALUES (?, ?, ?)",
                    [.text(app.bundleID), .of(app.appAppleID), .text(app.environments.joined(separator: ","))])
            }
            for product in data.products {
                try connection.run(
                    """
                    INSERT INTO ref_product (bundle_id, product_id, type, units, ref_price, ref_currency)
                    VALUES (?, ?, ?, ?, ?, ?)
                    """,
                    [
                        .text(product.bundleID), .text(product.productID), .text(product.type), .integer(product.units),
                        .of(product.referencePrice), .of(product.referenceCurrency),
                    ])
            }
            for tester in Set(data.testers).sorted() {
                try connection.run("INSERT INTO ref_tester (user_id, note) VALUES (?, NULL)", [.text(tester)])
            }
            for rate in data.fxRates {
                try connection.run(
                    """
                    INSERT INTO ref_fx_rate (currency, rate_date, per_eur, source) VALUES (?, ?, ?, ?)
                    ON CONFLICT (currency, rate_date) DO UPDATE SET per_eur = excluded.per_eur, source = excluded.source
                    """,
                    [.text(rate.currency), .integer(rate.rateDate), .real(rate.perEUR), .text(rate.source)])
            }
        }
    }

    // MARK: Files

    public func fileState(sourceName: String, path: String) throws -> FileState? {
        guard
            let row = try connection.query(
                "SELECT size, content_hash, stat_key FROM file_state WHERE source_name = ? AND path = ?",
                [.text(sourceName), .text(path)]
            ).first,
            let size = row[0].integerValue, let hash = row[1].textValue
        else { return nil }
        return FileState(path: path, size: size, contentHash: hash, statKey: row[2].textValue)
    }

    public func setFileState(_ state: FileState, sourceName: String, runID: Int64) throws {
        try connection.run(
            """
            INSERT INTO file_state (source_name, path, size, content_hash, run_id, stat_key) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (source_name, path) DO UPDATE SET
                size = excluded.size, content_hash = excluded.content_hash, run_id = excluded.run_id,
                stat_key = excluded.stat_key
            """,
            [
                .text(sourceName), .text(state.path), .integer(state.size), .text(state.contentHash), .integer(runID),
                state.statKey.map { .text($0) } ?? .null,
            ])
    }

    public func setUncheckedTransactions(
        _ transactionIDs: [String], reason: String, sourceName: String, runID: Int64
    ) throws {
        try connection.run("DELETE FROM api_unchecked WHERE source_name = ?", [.text(sourceName)])
        for id in Set(transactionIDs).sorted() {
            try connection.run(
                "INSERT INTO api_unchecked (source_name, transaction_id, reason, run_id) VALUES (?, ?, ?, ?)",
                [.text(sourceName), .text(id), .text(reason), .integer(runID)])
        }
    }

    public func setUnchecked(_ transactionID: String, reason: String?, sourceName: String, runID: Int64) throws {
        guard let reason else {
            try connection.run(
                "DELETE FROM api_unchecked WHERE source_name = ? AND transaction_id = ?",
                [.text(sourceName), .text(transactionID)])
            return
        }
        try connection.run(
            "UPDATE api_unchecked SET reason = ?, run_id = ? WHERE source_name = ? AND transaction_id = ?",
            [.text(reason), .integer(runID), .text(sourceName), .text(transactionID)])
    }

    // MARK: Reads

    public func query(
        _ sql: String, parameters: [String: SQLValue], _ body: ([String], [SQLValue]) throws -> Void
    ) throws {
        try connection.query(sql, named: parameters, body)
    }

    public func inTransaction<T>(_ body: () throws -> T) throws -> T {
        try connection.transaction(body)
    }

    public func isolatingFailure<T>(_ body: () throws -> T) throws -> T {
        connection.dialect == .postgres ? try connection.transaction(body) : try body()
    }

    // MARK: Writes

    public func write(_ batch: IngestBatch, runID: Int64) throws -> WriteCounts {
        try writeRowByRow(batch, runID: runID)
    }

    /// Writes a batch one record at a time in one transaction (the reference semantics every fast path
    /// must match).
    public func writeRowByRow(_ batch: IngestBatch, runID: Int64) throws -> WriteCounts {
        try connection.transaction {
            var counts = WriteCounts()
            for sighting in batch.sightings { counts = counts + (try writeSighting(sighting, runID: runID)) }
            for entry in batch.orders {
                counts = counts + (try writeOrder(entry.order, entry.sourceName, entry.sourceRef, runID))
            }
            for entry in batch.credits {
                counts = counts + (try writeCredit(entry.credit, entry.sourceName, entry.sourceRef, runID))
            }
            for notification in batch.notifications {
                counts = counts + (try writeNotification(notification, runID: runID))
            }
            for entry in batch.users {
                counts =
                    counts
                    + (try upsertRow(
                        StoreRecords.userTable, values: StoreRecords.values(of: entry.user),
                        sourceName: entry.sourceName, sourceRef: entry.sourceRef, runID: runID))
            }
            for record in batch.quarantined { counts = counts + (try writeQuarantine(record, runID: runID)) }
            return counts
        }
    }

    func writeQuarantine(_ record: QuarantinedRecord, runID: Int64) throws -> WriteCounts {
        let changed = try connection.run(
            StoreRecords.insertQuarantineSQL,
            [
                .integer(runID), .text(record.sourceName), .text(record.location), .text(record.reason),
                .text(record.rawExcerpt), .text(record.rawHash), .integer(runID),
            ])
        if changed == 0 {
            _ = try connection.run(
                StoreRecords.markQuarantineSeenSQL,
                [.integer(runID), .text(record.sourceName), .text(record.location), .text(record.rawHash)])
        }
        return StoreRecords.one(inserted: changed > 0, error: true)
    }

    public func removeQuarantined(sourceName: String, fileName: String, notSeenIn runID: Int64) throws {
        // Only the records this run did not read again are fetched; the prefix is matched here, not with
        // LIKE: a file name may hold `%` or `_`.
        let prefix = fileName + ":"
        let gone = try connection.query(
            "SELECT quarantine_id, location FROM quarantine WHERE source_name = ? "
                + "AND (seen_run_id IS NULL OR seen_run_id <> ?)",
            [.text(sourceName), .integer(runID)]
        ).compactMap { row -> Int64? in
            guard let location = row[1].textValue, location.hasPrefix(prefix) else { return nil }
            return row[0].integerValue
        }
        for id in gone { try connection.run("DELETE FROM quarantine WHERE quarantine_id = ?", [.integer(id)]) }
    }

    func writeSighting(_ s: AppleSighting, runID: Int64) throws -> WriteCounts {
        let sightingID = s.sightingID
        let transactionValues = StoreRecords.values(of: s.transaction)
        let values = StoreRecords.values(
            of: s, sightingID: sightingID, transactionValues: transactionValues, runID: runID)
        let inserted = try connection.run(StoreRecords.insertSightingSQL, values)
        guard inserted > 0 else { return StoreRecords.one() }
        if s.verification.status == .failed {
            // Quarantined: kept as a sighting, never Apple's truth.
            return StoreRecords.one(inserted: true)
        }
        try mergeCanonical(s, sightingID: sightingID, transactionValues: transactionValues, runID: runID)
        return StoreRecords.one(inserted: true)
    }

    func mergeCanonical(_ s: AppleSighting, sightingID: String, transactionValues: [SQLValue], runID: Int64) throws {
        if let existing = try selectCanonical(s.transaction.transactionID) {
            try updateCanonical(
                s, sightingID: sightingID, transactionValues: transactionValues, existing: existing, runID: runID)
        } else {
            try connection.run(
                StoreRecords.insertCanonicalSQL,
                transactionValues + StoreRecords.canonicalValues(of: s, sightingID: sightingID, runID: runID))
        }
        if StoreRecords.carriesRevocation(s.transaction) {
            try applyRefundReversal(s.transaction.transactionID, runID: runID)
        }
    }

    /// The canonical row of a transaction id: its transaction columns, then `verification`.
    func selectCanonical(_ transactionID: String) throws -> [SQLValue]? {
        try connection.query(StoreRecords.selectCanonicalSQL, [.text(transactionID)]).first
    }

    /// Folds sighting `s` into the existing canonical row `existing` (from ``selectCanonical(_:)``): one more
    /// sighting, a conflict when identity fields disagree, and — when `s` is a better copy — its fields, each
    /// change logged.
    func updateCanonical(
        _ s: AppleSighting, sightingID: String, transactionValues: [SQLValue], existing: [SQLValue], runID: Int64
    ) throws {
        let columns = StoreRecords.transactionColumns
        let old = existing
        let oldStatus = VerificationOutcome.Status(rawValue: existing[columns.count].textValue ?? "") ?? .unverified
        let oldPrecedence = VerificationOutcome(status: oldStatus).precedence
        let oldRecency = old[StoreRecords.signedDateIndex].integerValue ?? 0
        let recency = s.transaction.signedDate ?? s.receivedAt ?? 0
        var conflict = false
        for index in StoreRecords.identityIndexes {
            if !old[index].isNull, !transactionValues[index].isNull, old[index] != transactionValues[index] {
                conflict = true
            }
        }
        let better =
            s.verification.precedence > oldPrecedence
            || (s.verification.precedence == oldPrecedence && recency > oldRecency)
        // The revocation fields are one fact that Apple's newest signed copy decides: a better copy signed no
        // earlier than the stored one replaces them all, and one without them clears them (a reversed refund).
        // A better copy that is older, or unsigned, only adds a revocation it carries.
        let decidesRevocation: Bool
        if better, let signed = s.transaction.signedDate, let oldSigned = old[StoreRecords.signedDateIndex].integerValue
        {
            decidesRevocation = signed >= oldSigned
        } else {
            decidesRevocation = false
        }
        var assignments = ["sighting_count = sighting_count + 1"]
        var parameters: [SQLValue] = []
        if conflict { assignments.append("conflict_count = conflict_count + 1") }
        if better {
            for (index, name) in columns.enumerated() where index > 0 {
                let newValue = transactionValues[index]
                let decided = decidesRevocation && StoreRecords.revocationIndexes.contains(index)
                // A better copy replaces the fields it carries; it does not erase facts it lacks.
                guard decided || !newValue.isNull, newValue != old[index] else { continue }
                assignments.append(StoreRecords.transactionAssignments[index])
                parameters.append(newValue)
                try logChange(
                    runID: runID, entity: "transaction", key: s.transaction.transactionID, field: name, old: old[index],
                    new: newValue)
            }
            assignments.append("source_kind = ?")
            parameters.append(.text(s.sourceKind.rawValue))
            assignments.append("verification = ?")
            parameters.append(.text(s.verification.status.rawValue))
            assignments.append("best_sighting_id = ?")
            parameters.append(.text(sightingID))
        }
        assignments.append("last_run_id = ?")
        parameters.append(.integer(runID))
        parameters.append(.text(s.transaction.transactionID))
        try connection.run(
            "UPDATE apple_transaction SET \(assignments.joined(separator: ", ")) WHERE transaction_id = ?", parameters)
    }

    /// Clears the revocation fields of `transactionID`'s canonical row when a verified REFUND_REVERSED
    /// notification is signed no earlier than the copy the row holds (or the row's copy is undated): Apple
    /// took the refund back after the copy that reported it. A copy signed after the reversal (a new refund)
    /// is left alone. Each cleared field is logged. Call after every write that may have set a revocation
    /// and after every stored reversal, so the arrival order does not matter.
    func applyRefundReversal(_ transactionID: String, runID: Int64) throws {
        guard
            let row = try connection.query(StoreRecords.selectRevocationSQL, [.text(transactionID)]).first,
            row.prefix(StoreRecords.revocationColumns.count).contains(where: { !$0.isNull }),
            let reversed = try connection.query(StoreRecords.latestReversalSQL, [.text(transactionID)]).first?.first?
                .integerValue
        else { return }
        if let signed = row[StoreRecords.revocationColumns.count].integerValue, signed > reversed { return }
        var assignments: [String] = []
        for (index, name) in StoreRecords.revocationColumns.enumerated() where !row[index].isNull {
            assignments.append("\(name) = NULL")
            try logChange(
                runID: runID, entity: "transaction", key: transactionID, field: name, old: row[index], new: .null)
        }
        try connection.run(
            "UPDATE apple_transaction SET \(assignments.joined(separator: ", ")), last_run_id = ? WHERE transaction_id = ?",
            [.integer(runID), .text(transactionID)])
    }

    func logChange(runID: Int64, entity: String, key: String, field: String, old: SQLValue, new: SQLValue)
        throws
    {
        try connection.run(
            StoreRecords.insertChangeSQL,
            [.integer(runID), .text(entity), .text(key), .text(field), .of(old.textValue), .of(new.textValue)])
    }

    func writeOrder(_ o: BackendOrder, _ sourceName: String, _ sourceRef: String, _ runID: Int64) throws
        -> WriteCounts
    {
        try upsertRow(
            StoreRecords.orderTable, values: StoreRecords.values(of: o), sourceName: sourceName, sourceRef: sourceRef,
            runID: runID)
    }

    /// Writes a credit, or a clawback (negative units) to `credit_clawback`; see ``applyCreditClawbacks(runID:)``.
    func writeCredit(_ c: Credit, _ sourceName: String, _ sourceRef: String, _ runID: Int64) throws
        -> WriteCounts
    {
        if c.isClawback {
            return try upsertRow(
                StoreRecords.clawbackTable, values: StoreRecords.clawbackValues(of: c), sourceName: sourceName,
                sourceRef: sourceRef, runID: runID)
        }
        return try upsertRow(
            StoreRecords.creditTable, values: StoreRecords.values(of: c), sourceName: sourceName, sourceRef: sourceRef,
            runID: runID)
    }

    /// Inserts a row keyed by its first column, or updates it (logging each changed field) when its content
    /// hash differs. An identical row changes nothing, not even bookkeeping columns.
    func upsertRow(
        _ table: StoreRecords.KeyedTable, values: [SQLValue], sourceName: String, sourceRef: String, runID: Int64
    ) throws -> WriteCounts {
        let rowHash = StoreRecords.rowHash(values)
        guard let existing = try connection.query(table.selectSQL, [values[0]]).first else {
            try connection.run(
                table.insertSQL,
                values + [.text(sourceName), .text(sourceRef), .text(rowHash), .integer(runID), .integer(runID)])
            return StoreRecords.one(inserted: true)
        }
        return try updateRow(
            table, values: values, rowHash: rowHash, existing: existing, sourceName: sourceName, sourceRef: sourceRef,
            runID: runID)
    }

    /// Updates the existing row `existing` (`row_hash`, then the table's columns, from the table's select)
    /// to `values` unless the content hash is the same; each changed field is logged.
    func updateRow(
        _ table: StoreRecords.KeyedTable, values: [SQLValue], rowHash: String, existing: [SQLValue],
        sourceName: String, sourceRef: String, runID: Int64
    ) throws -> WriteCounts {
        if existing[0].textValue == rowHash { return StoreRecords.one() }
        let key = values[0]
        var assignments: [String] = []
        var parameters: [SQLValue] = []
        for (index, name) in table.columns.enumerated() where index > 0 {
            let old = existing[index + 1]
            let new = values[index]
            guard old != new else { continue }
            assignments.append(table.assignments[index])
            parameters.append(new)
            try logChange(runID: runID, entity: table.entity, key: key.description, field: name, old: old, new: new)
        }
        assignments += ["source_name = ?", "source_ref = ?", "row_hash = ?", "last_run_id = ?"]
        parameters += [.text(sourceName), .text(sourceRef), .text(rowHash), .integer(runID), key]
        try connection.run(
            "UPDATE \(table.name) SET \(assignments.joined(separator: ", ")) WHERE \(table.columns[0]) = ?", parameters)
        return StoreRecords.one(updated: true)
    }

    func writeNotification(_ n: AppleNotification, runID: Int64) throws -> WriteCounts {
        let values = StoreRecords.values(of: n, runID: runID)
        let existing = try connection.query(StoreRecords.selectNotificationSQL, [.text(n.notificationUUID)]).first
        if let existing {
            guard try replaceNotification(n, existing: existing, runID: runID) else { return StoreRecords.one() }
        }
        try connection.run(StoreRecords.insertNotificationSQL, values)
        try notificationStored(n, runID: runID)
        return existing == nil ? StoreRecords.one(inserted: true) : StoreRecords.one(updated: true)
    }

    /// What a newly stored notification changes elsewhere: a verified REFUND_REVERSED clears the revocation
    /// its transaction was stored with (``applyRefundReversal(_:runID:)``).
    func notificationStored(_ n: AppleNotification, runID: Int64) throws {
        guard n.notificationType == "REFUND_REVERSED", n.verification.status == .verified,
            let transactionID = n.transactionID
        else { return }
        try applyRefundReversal(transactionID, runID: runID)
    }

    /// Whether notification `n` replaces the stored copy `existing` (its `verification`, `payload_hash`);
    /// when it does, the change is logged and the stored copy deleted for `n` to be inserted.
    func replaceNotification(_ n: AppleNotification, existing: [SQLValue], runID: Int64) throws -> Bool {
        // Apple re-sends a notification with the same UUID; a verified copy replaces an unverified or
        // failed one (the failed copy stays visible in the change log), anything else is a duplicate.
        let oldStatus = VerificationOutcome.Status(rawValue: existing[0].textValue ?? "") ?? .unverified
        guard n.verification.precedence > VerificationOutcome(status: oldStatus).precedence else { return false }
        try logChange(
            runID: runID, entity: "notification", key: n.notificationUUID, field: "verification", old: existing[0],
            new: .text(n.verification.status.rawValue))
        try connection.run("DELETE FROM notification WHERE notification_uuid = ?", [.text(n.notificationUUID)])
        return true
    }
}

/// A store-level failure that is not an engine error (a missing generated key, a bad location).
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
