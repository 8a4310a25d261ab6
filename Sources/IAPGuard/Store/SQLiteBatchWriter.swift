/// SQLite's fast path for ``SQLiteStore/write(_:runID:)``, with exactly the results of
/// ``SQLBackedStore/writeRowByRow(_:runID:)`` (pinned by `SQLiteBatchWriterTests`).
///
/// Fresh data is the common case, so each record is first *inserted* with `ON CONFLICT … DO NOTHING` through
/// a statement prepared once per connection, its fields bound straight from the model (no SQL text, no value
/// arrays per row); only when the key already exists does the record take the read-and-compare path shared
/// with every ``SQLBackedStore`` (update, `change_log`, canonical precedence). A sighting's id (a SHA-256
/// over the whole transaction) is computed once per record. Runs inside the caller's transaction, records in
/// batch order: sightings, orders, credits, notifications, quarantined records.
final class SQLiteBatchWriter {
    private let insertSighting: SQLiteStatement
    private let insertCanonical: SQLiteStatement
    private let insertOrder: SQLiteStatement
    private let insertCredit: SQLiteStatement
    private let insertNotification: SQLiteStatement

    /// Prepares the insert statements on `database` (they stay in its statement cache).
    init(database: SQLiteDatabase) throws {
        insertSighting = try database.cached(StoreRecords.insertSightingSQL)
        insertCanonical = try database.cached(StoreRecords.insertCanonicalIfNewSQL)
        insertOrder = try database.cached(StoreRecords.orderTable.insertIfNewSQL)
        insertCredit = try database.cached(StoreRecords.creditTable.insertIfNewSQL)
        insertNotification = try database.cached(StoreRecords.insertNotificationIfNewSQL)
    }

    /// Writes `batch` through `store`'s connection; the caller holds the transaction.
    func write(_ batch: IngestBatch, runID: Int64, store: SQLiteStore) throws -> WriteCounts {
        var counts = WriteCounts()
        // Borrowed through the buffer: a sighting is some forty fields, and an array subscript copies one
        // per row (retaining each string), a tenth of the writer's time.
        try batch.sightings.withUnsafeBufferPointer { sightings in
            for index in sightings.indices {
                counts = counts + (try writeSighting(sightings[index], runID: runID, store: store))
            }
        }
        for entry in batch.orders {
            counts =
                counts
                + (try writeKeyed(
                    StoreRecords.orderTable, insertOrder, values: StoreRecords.values(of: entry.order),
                    sourceName: entry.sourceName, sourceRef: entry.sourceRef, runID: runID, store: store))
        }
        for entry in batch.credits {
            if entry.credit.isClawback {
                counts = counts + (try store.writeCredit(entry.credit, entry.sourceName, entry.sourceRef, runID))
                continue
            }
            counts =
                counts
                + (try writeKeyed(
                    StoreRecords.creditTable, insertCredit, values: StoreRecords.values(of: entry.credit),
                    sourceName: entry.sourceName, sourceRef: entry.sourceRef, runID: runID, store: store))
        }
        for notification in batch.notifications {
            counts = counts + (try writeNotification(notification, runID: runID, store: store))
        }
        for entry in batch.users {
            counts =
                counts
                + (try store.upsertRow(
                    StoreRecords.userTable, values: StoreRecords.values(of: entry.user), sourceName: entry.sourceName,
                    sourceRef: entry.sourceRef, runID: runID))
        }
        for record in batch.quarantined { counts = counts + (try store.writeQuarantine(record, runID: runID)) }
        return counts
    }

    // MARK: Sightings

    private func writeSighting(_ s: borrowing AppleSighting, runID: Int64, store: SQLiteStore) throws -> WriteCounts {
        let sightingID = s.sightingID
        let statement = insertSighting
        statement.rewind()
        try Self.bind(s.transaction, to: statement)
        var index = Int32(StoreRecords.transactionColumns.count)
        func next() -> Int32 {
            index += 1
            return index
        }
        try statement.bind(text: sightingID, at: next())
        try statement.bind(text: s.sourceKind.rawValue, at: next())
        try statement.bind(text: s.sourceName, at: next())
        try statement.bind(text: s.sourceRef, at: next())
        try statement.bind(text: s.payloadHash, at: next())
        try statement.bind(text: s.receiptKey, at: next())
        try statement.bind(integer: s.receiptStatus, at: next())
        try statement.bind(text: s.submittedByUserID, at: next())
        try statement.bind(text: s.submittedOrderID, at: next())
        try statement.bind(integer: s.receivedAt, at: next())
        try statement.bind(text: s.verification.status.rawValue, at: next())
        try statement.bind(text: s.verification.reason, at: next())
        try statement.bind(text: s.verification.detail, at: next())
        try statement.bind(text: StoreRecords.anomalies(of: s), at: next())
        try statement.bind(integer: runID, at: next())
        guard try statement.runChanges() > 0 else { return StoreRecords.one() }
        if s.verification.status == .failed {
            // Quarantined: kept as a sighting, never Apple's truth.
            return StoreRecords.one(inserted: true)
        }
        if try !insertCanonicalIfNew(s, sightingID: sightingID, runID: runID) {
            let transactionID = s.transaction.transactionID
            guard let existing = try store.selectCanonical(transactionID) else {
                throw StoreError(message: "transaction \(transactionID) neither inserted nor found")
            }
            try store.updateCanonical(
                s, sightingID: sightingID, transactionValues: StoreRecords.values(of: s.transaction),
                existing: existing, runID: runID)
        }
        if StoreRecords.carriesRevocation(s.transaction) {
            try store.applyRefundReversal(s.transaction.transactionID, runID: runID)
        }
        return StoreRecords.one(inserted: true)
    }

    /// Inserts the canonical row first made from `s` unless its transaction id is already stored.
    private func insertCanonicalIfNew(_ s: borrowing AppleSighting, sightingID: String, runID: Int64) throws -> Bool {
        let statement = insertCanonical
        statement.rewind()
        try Self.bind(s.transaction, to: statement)
        let first = Int32(StoreRecords.transactionColumns.count)
        try statement.bind(text: s.sourceKind.rawValue, at: first + 1)
        try statement.bind(text: s.verification.status.rawValue, at: first + 2)
        try statement.bind(text: sightingID, at: first + 3)
        try statement.bind(integer: 1, at: first + 4)
        try statement.bind(integer: 0, at: first + 5)
        try statement.bind(integer: runID, at: first + 6)
        try statement.bind(integer: runID, at: first + 7)
        return try statement.runChanges() > 0
    }

    /// Binds `t` at parameters 1… in ``StoreRecords/transactionColumns`` order.
    private static func bind(_ t: borrowing AppleTransaction, to statement: SQLiteStatement) throws {
        try statement.bind(text: t.transactionID, at: 1)
        try statement.bind(text: t.originalTransactionID, at: 2)
        try statement.bind(text: t.webOrderLineItemID, at: 3)
        try statement.bind(text: t.bundleID, at: 4)
        try statement.bind(text: t.productID, at: 5)
        try statement.bind(text: t.type, at: 6)
        try statement.bind(integer: t.quantity, at: 7)
        try statement.bind(integer: t.purchaseDate, at: 8)
        try statement.bind(integer: t.originalPurchaseDate, at: 9)
        try statement.bind(integer: t.expiresDate, at: 10)
        try statement.bind(text: t.environment, at: 11)
        try statement.bind(text: t.storefront, at: 12)
        try statement.bind(text: t.currency, at: 13)
        try statement.bind(integer: t.price, at: 14)
        try statement.bind(text: t.appAccountToken, at: 15)
        try statement.bind(text: t.inAppOwnershipType, at: 16)
        try statement.bind(text: t.transactionReason, at: 17)
        try statement.bind(integer: t.revocationDate, at: 18)
        try statement.bind(integer: t.revocationReason, at: 19)
        try statement.bind(text: t.revocationType, at: 20)
        try statement.bind(integer: t.revocationPercentage, at: 21)
        try statement.bind(integer: t.signedDate, at: 22)
        try statement.bind(text: t.appTransactionID, at: 23)
        try statement.bind(integer: t.offerType, at: 24)
        try statement.bind(text: t.offerIdentifier, at: 25)
        try statement.bind(text: t.offerDiscountType, at: 26)
        try statement.bind(text: t.offerPeriod, at: 27)
        try statement.bind(text: t.billingPlanType, at: 28)
        try statement.bind(text: t.commitmentInfo, at: 29)
        try statement.bind(text: t.advancedCommerceInfo, at: 30)
        try statement.bind(text: t.unknownFields, at: 31)
    }

    // MARK: Orders and credits

    private func writeKeyed(
        _ table: StoreRecords.KeyedTable, _ statement: SQLiteStatement, values: [SQLValue], sourceName: String,
        sourceRef: String, runID: Int64, store: SQLiteStore
    ) throws -> WriteCounts {
        let rowHash = StoreRecords.rowHash(values)
        statement.rewind()
        try statement.bind(values, from: 1)
        let first = Int32(values.count)
        try statement.bind(text: sourceName, at: first + 1)
        try statement.bind(text: sourceRef, at: first + 2)
        try statement.bind(text: rowHash, at: first + 3)
        try statement.bind(integer: runID, at: first + 4)
        try statement.bind(integer: runID, at: first + 5)
        if try statement.runChanges() > 0 { return StoreRecords.one(inserted: true) }
        guard let existing = try store.database.query(table.selectSQL, [values[0]]).first else {
            throw StoreError(message: "\(table.entity) \(values[0]) neither inserted nor found")
        }
        return try store.updateRow(
            table, values: values, rowHash: rowHash, existing: existing, sourceName: sourceName, sourceRef: sourceRef,
            runID: runID)
    }

    // MARK: Notifications

    private func writeNotification(_ n: AppleNotification, runID: Int64, store: SQLiteStore) throws -> WriteCounts {
        let values = StoreRecords.values(of: n, runID: runID)
        let statement = insertNotification
        statement.rewind()
        try statement.bind(values, from: 1)
        if try statement.runChanges() > 0 {
            try store.notificationStored(n, runID: runID)
            return StoreRecords.one(inserted: true)
        }
        guard
            let existing = try store.database.query(StoreRecords.selectNotificationSQL, [.text(n.notificationUUID)])
                .first
        else {
            throw StoreError(message: "notification \(n.notificationUUID) neither inserted nor found")
        }
        guard try store.replaceNotification(n, existing: existing, runID: runID) else { return StoreRecords.one() }
        try store.database.run(StoreRecords.insertNotificationSQL, values)
        try store.notificationStored(n, runID: runID)
        return StoreRecords.one(updated: true)
    }
}
