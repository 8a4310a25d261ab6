import Foundation

/// The embedded default store: one SQLite file in WAL mode.
///
/// Writes are idempotent: a record already stored with the same content changes nothing; a record whose
/// content changed (an order paid later, a refund on a transaction) is updated and every changed field is
/// logged in `change_log`.
public final class SQLiteStore: PurchaseStore {
    public let database: SQLiteDatabase

    /// Opens or creates the store at `path` (`":memory:"` for tests). Read-only stores are for lookups.
    public init(path: String, readOnly: Bool = false) throws {
        if !readOnly, path != ":memory:" {
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        database = try SQLiteDatabase(path: path, mode: readOnly ? .readOnly : .readWrite)
        if !readOnly {
            if path != ":memory:" { try database.execute("PRAGMA journal_mode = WAL") }
            try database.execute("PRAGMA synchronous = NORMAL")
        }
        try database.execute("PRAGMA foreign_keys = OFF")
    }

    // MARK: Migrations

    public func migrate() throws {
        try database.execute(
            """
            CREATE TABLE IF NOT EXISTS schema_migration (
                version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)
            """)
        let applied = Set(
            try database.query("SELECT version FROM schema_migration").compactMap { $0.first?.integerValue })
        for migration in Schema.migrations where !applied.contains(Int64(migration.version)) {
            try database.transaction {
                try database.execute(migration.sql)
                try database.run(
                    "INSERT INTO schema_migration (version, name, applied_at) VALUES (?, ?, ?)",
                    [.integer(Int64(migration.version)), .text(migration.name), .integer(Clock.nowMillis())])
            }
        }
    }

    /// The schema version currently applied.
    public func schemaVersion() throws -> Int {
        Int(try database.scalar("SELECT MAX(version) FROM schema_migration")?.integerValue ?? 0)
    }

    // MARK: Runs

    public func beginRun(_ start: RunStart) throws -> Int64 {
        try database.run(
            """
            INSERT INTO run (started_at, status, window_since, window_until, config_hash, tool_version)
            VALUES (?, 'running', ?, ?, ?, ?)
            """,
            [
                .integer(start.startedAt), .of(start.windowSince), .of(start.windowUntil), .text(start.configHash),
                .text(start.toolVersion),
            ])
        return database.lastInsertRowID
    }

    public func finishRun(_ runID: Int64, status: String, finishedAt: Int64, summaryJSON: String?) throws {
        try database.run(
            "UPDATE run SET status = ?, finished_at = ?, summary_json = ? WHERE run_id = ?",
            [.text(status), .integer(finishedAt), .of(summaryJSON), .integer(runID)])
    }

    public func recordSourceCounts(runID: Int64, sourceName: String, sourceKind: String, counts: WriteCounts) throws {
        try database.run(
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
        try database.transaction {
            try database.execute(
                "DELETE FROM ref_app; DELETE FROM ref_product; DELETE FROM ref_tester; DELETE FROM ref_fx_rate;")
            for app in data.apps {
                try database.run(
                    "INSERT INTO ref_app (bundle_id, app_apple_id, environments) VALUES (?, ?, ?)",
                    [.text(app.bundleID), .of(app.appAppleID), .text(app.environments.joined(separator: ","))])
            }
            for product in data.products {
                try database.run(
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
                try database.run("INSERT INTO ref_tester (user_id, note) VALUES (?, NULL)", [.text(tester)])
            }
            for rate in data.fxRates {
                try database.run(
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
            let row = try database.query(
                "SELECT size, content_hash FROM file_state WHERE source_name = ? AND path = ?",
                [.text(sourceName), .text(path)]
            ).first,
            let size = row[0].integerValue, let hash = row[1].textValue
        else { return nil }
        return FileState(path: path, size: size, contentHash: hash)
    }

    public func setFileState(_ state: FileState, sourceName: String, runID: Int64) throws {
        try database.run(
            """
            INSERT INTO file_state (source_name, path, size, content_hash, run_id) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (source_name, path) DO UPDATE SET
                size = excluded.size, content_hash = excluded.content_hash, run_id = excluded.run_id
            """,
            [.text(sourceName), .text(state.path), .integer(state.size), .text(state.contentHash), .integer(runID)])
    }

    // MARK: Reads

    public func query(
        _ sql: String, parameters: [String: SQLValue], _ body: ([String], [SQLValue]) throws -> Void
    ) throws {
        try database.query(sql, named: parameters, body)
    }

    public func inTransaction<T>(_ body: () throws -> T) throws -> T {
        try database.transaction(body)
    }

    // MARK: Writes

    public func write(_ batch: IngestBatch, runID: Int64) throws -> WriteCounts {
        try database.transaction {
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
            for record in batch.quarantined { counts = counts + (try writeQuarantine(record, runID: runID)) }
            return counts
        }
    }

    private static func one(inserted: Bool = false, updated: Bool = false, error: Bool = false) -> WriteCounts {
        var c = WriteCounts()
        c.records = 1
        if error {
            c.errors = 1
            if inserted { c.inserted = 1 } else { c.unchanged = 1 }
        } else if inserted {
            c.inserted = 1
        } else if updated {
            c.updated = 1
        } else {
            c.unchanged = 1
        }
        return c
    }

    private func writeQuarantine(_ record: QuarantinedRecord, runID: Int64) throws -> WriteCounts {
        let changed = try database.run(
            """
            INSERT INTO quarantine (run_id, source_name, location, reason, raw_excerpt, raw_hash)
            VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (source_name, location, raw_hash) DO NOTHING
            """,
            [
                .integer(runID), .text(record.sourceName), .text(record.location), .text(record.reason),
                .text(record.rawExcerpt), .text(record.rawHash),
            ])
        return Self.one(inserted: changed > 0, error: true)
    }

    /// The transaction columns shared by `apple_sighting` and `apple_transaction`, in schema order.
    static let transactionColumns = [
        "transaction_id", "original_transaction_id", "web_order_line_item_id", "bundle_id", "product_id", "type",
        "quantity", "purchase_date", "original_purchase_date", "expires_date", "environment", "storefront", "currency",
        "price", "app_account_token", "in_app_ownership_type", "transaction_reason", "revocation_date",
        "revocation_reason", "revocation_type", "revocation_percentage", "signed_date",
    ]

    static func values(of t: AppleTransaction) -> [SQLValue] {
        [
            .text(t.transactionID), .of(t.originalTransactionID), .of(t.webOrderLineItemID), .of(t.bundleID),
            .of(t.productID), .of(t.type), .of(t.quantity), .of(t.purchaseDate), .of(t.originalPurchaseDate),
            .of(t.expiresDate), .of(t.environment), .of(t.storefront), .of(t.currency), .of(t.price),
            .of(t.appAccountToken), .of(t.inAppOwnershipType), .of(t.transactionReason), .of(t.revocationDate),
            .of(t.revocationReason), .of(t.revocationType), .of(t.revocationPercentage), .of(t.signedDate),
        ]
    }

    /// Fields whose disagreement between two copies of one transaction id means a conflicting copy.
    static let identityColumns: Set<String> = [
        "original_transaction_id", "bundle_id", "product_id", "purchase_date", "environment", "quantity",
    ]

    private func writeSighting(_ s: AppleSighting, runID: Int64) throws -> WriteCounts {
        let columns =
            Self.transactionColumns + [
                "sighting_id", "source_kind", "source_name", "source_ref", "payload_hash", "receipt_key",
                "receipt_status",
                "submitted_by_user_id", "submitted_order_id", "received_at", "verification", "verification_reason",
                "verification_detail", "anomalies", "first_run_id",
            ]
        let transactionValues = Self.values(of: s.transaction)
        let sightingID = s.sightingID  // a SHA-256: computed once
        let values =
            transactionValues + [
                .text(sightingID), .text(s.sourceKind.rawValue), .text(s.sourceName), .text(s.sourceRef),
                .text(s.payloadHash), .of(s.receiptKey), .of(s.receiptStatus), .of(s.submittedByUserID),
                .of(s.submittedOrderID), .of(s.receivedAt), .text(s.verification.status.rawValue),
                .of(s.verification.reason), .of(s.verification.detail),
                .of(s.anomalies.isEmpty ? nil : s.anomalies.joined(separator: ",")), .integer(runID),
            ]
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        let inserted = try database.run(
            "INSERT INTO apple_sighting (\(columns.joined(separator: ", "))) VALUES (\(placeholders)) ON CONFLICT (sighting_id) DO NOTHING",
            values)
        guard inserted > 0 else { return Self.one() }
        if s.verification.status == .failed {
            // Quarantined: kept as a sighting, never Apple's truth.
            return Self.one(inserted: true)
        }
        try mergeCanonical(s, sightingID: sightingID, transactionValues: transactionValues, runID: runID)
        return Self.one(inserted: true)
    }

    private func mergeCanonical(_ s: AppleSighting, sightingID: String, transactionValues: [SQLValue], runID: Int64)
        throws
    {
        let columns = Self.transactionColumns
        let existing = try database.query(
            "SELECT \(columns.joined(separator: ", ")), verification, sighting_count, conflict_count FROM apple_transaction WHERE transaction_id = ?",
            [.text(s.transaction.transactionID)]
        ).first
        let recency = s.transaction.signedDate ?? s.receivedAt ?? 0
        guard let existing else {
            let all =
                columns + [
                    "source_kind", "verification", "best_sighting_id", "sighting_count", "conflict_count",
                    "first_run_id",
                    "last_run_id",
                ]
            let placeholders = Array(repeating: "?", count: all.count).joined(separator: ", ")
            try database.run(
                "INSERT INTO apple_transaction (\(all.joined(separator: ", "))) VALUES (\(placeholders))",
                transactionValues + [
                    .text(s.sourceKind.rawValue), .text(s.verification.status.rawValue), .text(sightingID),
                    .integer(1),
                    .integer(0), .integer(runID), .integer(runID),
                ])
            return
        }
        let old = Array(existing[0..<columns.count])
        let oldStatus = VerificationOutcome.Status(rawValue: existing[columns.count].textValue ?? "") ?? .unverified
        let oldPrecedence = VerificationOutcome(status: oldStatus).precedence
        let oldRecency = old[columns.firstIndex(of: "signed_date") ?? 0].integerValue ?? 0
        var conflict = false
        for (index, name) in columns.enumerated() where Self.identityColumns.contains(name) {
            if !old[index].isNull, !transactionValues[index].isNull, old[index] != transactionValues[index] {
                conflict = true
            }
        }
        let better =
            s.verification.precedence > oldPrecedence
            || (s.verification.precedence == oldPrecedence && recency > oldRecency)
        var assignments = ["sighting_count = sighting_count + 1"]
        var parameters: [SQLValue] = []
        if conflict { assignments.append("conflict_count = conflict_count + 1") }
        if better {
            for (index, name) in columns.enumerated() where index > 0 {
                let newValue = transactionValues[index]
                // A better copy replaces the fields it carries; it does not erase facts it lacks.
                guard !newValue.isNull, newValue != old[index] else { continue }
                assignments.append("\(name) = ?")
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
        try database.run(
            "UPDATE apple_transaction SET \(assignments.joined(separator: ", ")) WHERE transaction_id = ?", parameters)
    }

    private func logChange(runID: Int64, entity: String, key: String, field: String, old: SQLValue, new: SQLValue)
        throws
    {
        try database.run(
            "INSERT INTO change_log (run_id, entity, entity_key, field, old_value, new_value) VALUES (?, ?, ?, ?, ?, ?)",
            [.integer(runID), .text(entity), .text(key), .text(field), .of(old.textValue), .of(new.textValue)])
    }

    static let orderColumns = [
        "order_id", "user_id", "bundle_id", "product_id", "quantity", "price", "currency", "storefront", "user_country",
        "created_at", "status", "transaction_id", "app_account_token", "application_username", "environment",
    ]

    static func values(of o: BackendOrder) -> [SQLValue] {
        [
            .text(o.orderID), .of(o.userID), .of(o.bundleID), .of(o.productID), .of(o.quantity), .of(o.price),
            .of(o.currency), .of(o.storefront), .of(o.userCountry), .of(o.createdAt), .of(o.status),
            .of(o.transactionID), .of(o.appAccountToken), .of(o.applicationUsername), .of(o.environment),
        ]
    }

    static let creditColumns = [
        "credit_id", "transaction_id", "order_id", "user_id", "product_id", "units", "credited_at", "reversed_at",
        "reversal_reason",
    ]

    static func values(of c: Credit) -> [SQLValue] {
        [
            .text(c.creditID), .of(c.transactionID), .of(c.orderID), .of(c.userID), .of(c.productID), .of(c.units),
            .of(c.creditedAt), .of(c.reversedAt), .of(c.reversalReason),
        ]
    }

    private func writeOrder(_ o: BackendOrder, _ sourceName: String, _ sourceRef: String, _ runID: Int64) throws
        -> WriteCounts
    {
        try upsertRow(
            table: "backend_order", entity: "order", columns: Self.orderColumns, values: Self.values(of: o),
            sourceName: sourceName, sourceRef: sourceRef, runID: runID)
    }

    private func writeCredit(_ c: Credit, _ sourceName: String, _ sourceRef: String, _ runID: Int64) throws
        -> WriteCounts
    {
        try upsertRow(
            table: "credit", entity: "credit", columns: Self.creditColumns, values: Self.values(of: c),
            sourceName: sourceName, sourceRef: sourceRef, runID: runID)
    }

    /// Inserts a row keyed by its first column, or updates it (logging each changed field) when its content
    /// hash differs. An identical row changes nothing, not even bookkeeping columns.
    private func upsertRow(
        table: String, entity: String, columns: [String], values: [SQLValue], sourceName: String, sourceRef: String,
        runID: Int64
    ) throws -> WriteCounts {
        let rowHash = Hashing.sha256Hex(values.map { $0.isNull ? "\u{0}" : $0.description }.joined(separator: "\u{1F}"))
        let key = values[0]
        let existing = try database.query(
            "SELECT row_hash, \(columns.joined(separator: ", ")) FROM \(table) WHERE \(columns[0]) = ?", [key]
        ).first
        guard let existing else {
            let all = columns + ["source_name", "source_ref", "row_hash", "first_run_id", "last_run_id"]
            let placeholders = Array(repeating: "?", count: all.count).joined(separator: ", ")
            try database.run(
                "INSERT INTO \(table) (\(all.joined(separator: ", "))) VALUES (\(placeholders))",
                values + [.text(sourceName), .text(sourceRef), .text(rowHash), .integer(runID), .integer(runID)])
            return Self.one(inserted: true)
        }
        if existing[0].textValue == rowHash { return Self.one() }
        var assignments: [String] = []
        var parameters: [SQLValue] = []
        for (index, name) in columns.enumerated() where index > 0 {
            let old = existing[index + 1]
            let new = values[index]
            guard old != new else { continue }
            assignments.append("\(name) = ?")
            parameters.append(new)
            try logChange(runID: runID, entity: entity, key: key.description, field: name, old: old, new: new)
        }
        assignments += ["source_name = ?", "source_ref = ?", "row_hash = ?", "last_run_id = ?"]
        parameters += [.text(sourceName), .text(sourceRef), .text(rowHash), .integer(runID), key]
        try database.run(
            "UPDATE \(table) SET \(assignments.joined(separator: ", ")) WHERE \(columns[0]) = ?", parameters)
        return Self.one(updated: true)
    }

    private func writeNotification(_ n: AppleNotification, runID: Int64) throws -> WriteCounts {
        let columns = [
            "notification_uuid", "notification_type", "subtype", "signed_date", "environment", "bundle_id",
            "app_apple_id", "transaction_id", "original_transaction_id", "product_id", "revocation_date",
            "revocation_reason", "revocation_percentage", "auto_renew_product_id", "auto_renew_status",
            "consumption_request_reason", "verification", "verification_reason", "verification_detail", "source_name",
            "source_ref", "payload_hash", "first_run_id",
        ]
        let values: [SQLValue] = [
            .text(n.notificationUUID), .of(n.notificationType), .of(n.subtype), .of(n.signedDate), .of(n.environment),
            .of(n.bundleID), .of(n.appAppleID), .of(n.transactionID), .of(n.originalTransactionID), .of(n.productID),
            .of(n.revocationDate), .of(n.revocationReason), .of(n.revocationPercentage), .of(n.autoRenewProductID),
            .of(n.autoRenewStatus), .of(n.consumptionRequestReason), .text(n.verification.status.rawValue),
            .of(n.verification.reason), .of(n.verification.detail), .text(n.sourceName), .text(n.sourceRef),
            .text(n.payloadHash), .integer(runID),
        ]
        let existing = try database.query(
            "SELECT verification, payload_hash FROM notification WHERE notification_uuid = ?",
            [.text(n.notificationUUID)]
        ).first
        if let existing {
            // Apple re-sends a notification with the same UUID; a verified copy replaces an unverified or
            // failed one (the failed copy stays visible in the change log), anything else is a duplicate.
            let oldStatus = VerificationOutcome.Status(rawValue: existing[0].textValue ?? "") ?? .unverified
            guard n.verification.precedence > VerificationOutcome(status: oldStatus).precedence else {
                return Self.one()
            }
            try logChange(
                runID: runID, entity: "notification", key: n.notificationUUID, field: "verification", old: existing[0],
                new: .text(n.verification.status.rawValue))
            try database.run("DELETE FROM notification WHERE notification_uuid = ?", [.text(n.notificationUUID)])
        }
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        try database.run(
            "INSERT INTO notification (\(columns.joined(separator: ", "))) VALUES (\(placeholders))", values)
        return existing == nil ? Self.one(inserted: true) : Self.one(updated: true)
    }
}
