import Crypto

/// The record shapes the store writes: column lists in schema order, a record's values in that order, the
/// statements (built once, not per row), and the counts one written record adds. Shared by every
/// ``SQLBackedStore``.
enum StoreRecords {
    /// The counts one written record adds. A quarantined record counts as an error only (not as inserted or
    /// unchanged): `records` = `inserted` + `updated` + `unchanged` + `errors`, and `inserted` is what the
    /// source's tables gained.
    static func one(inserted: Bool = false, updated: Bool = false, error: Bool = false) -> WriteCounts {
        var c = WriteCounts()
        c.records = 1
        if error {
            c.errors = 1
        } else if inserted {
            c.inserted = 1
        } else if updated {
            c.updated = 1
        } else {
            c.unchanged = 1
        }
        return c
    }

    /// The big tables (those a first load defers indexes on) that a source of `kind` writes rows to. Apple's
    /// records go to the sightings and transactions; orders and credits to their own tables.
    static func tables(writtenBy kind: Config.Source.Kind) -> [String] {
        switch kind {
        case .receipts, .signedTransactions, .notifications: ["apple_sighting", "apple_transaction"]
        case .orders: ["backend_order"]
        case .credits: ["credit"]
        case .users: []
        }
    }

    /// The transaction columns shared by `apple_sighting` and `apple_transaction`, in schema order.
    static let transactionColumns = [
        "transaction_id", "original_transaction_id", "web_order_line_item_id", "bundle_id", "product_id", "type",
        "quantity", "purchase_date", "original_purchase_date", "expires_date", "environment", "storefront", "currency",
        "price", "app_account_token", "in_app_ownership_type", "transaction_reason", "revocation_date",
        "revocation_reason", "revocation_type", "revocation_percentage", "signed_date", "app_transaction_id",
        "offer_type", "offer_identifier", "offer_discount_type", "offer_period", "billing_plan_type", "commitment_info",
        "advanced_commerce_info", "unknown_fields",
    ]

    static func values(of t: AppleTransaction) -> [SQLValue] {
        [
            .text(t.transactionID), .of(t.originalTransactionID), .of(t.webOrderLineItemID), .of(t.bundleID),
            .of(t.productID), .of(t.type), .of(t.quantity), .of(t.purchaseDate), .of(t.originalPurchaseDate),
            .of(t.expiresDate), .of(t.environment), .of(t.storefront), .of(t.currency), .of(t.price),
            .of(t.appAccountToken), .of(t.inAppOwnershipType), .of(t.transactionReason), .of(t.revocationDate),
            .of(t.revocationReason), .of(t.revocationType), .of(t.revocationPercentage), .of(t.signedDate),
            .of(t.appTransactionID), .of(t.offerType), .of(t.offerIdentifier), .of(t.offerDiscountType),
            .of(t.offerPeriod), .of(t.billingPlanType), .of(t.commitmentInfo), .of(t.advancedCommerceInfo),
            .of(t.unknownFields),
        ]
    }

    /// Fields whose disagreement between two copies of one transaction id means a conflicting copy.
    static let identityColumns: Set<String> = [
        "original_transaction_id", "bundle_id", "product_id", "purchase_date", "environment", "quantity",
    ]

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
        "reversal_reason", "consumed_units", "consumed_at",
    ]

    static let clawbackColumns = [
        "credit_id", "transaction_id", "order_id", "user_id", "product_id", "units", "credited_at", "reversal_reason",
    ]

    /// A clawback's row (`c.units` is negative).
    static func clawbackValues(of c: Credit) -> [SQLValue] {
        [
            .text(c.creditID), .of(c.transactionID), .of(c.orderID), .of(c.userID), .of(c.productID), .of(c.units),
            .of(c.creditedAt), .of(c.reversalReason),
        ]
    }

    static func values(of c: Credit) -> [SQLValue] {
        [
            .text(c.creditID), .of(c.transactionID), .of(c.orderID), .of(c.userID), .of(c.productID), .of(c.units),
            .of(c.creditedAt), .of(c.reversedAt), .of(c.reversalReason), .of(c.consumedUnits), .of(c.consumedAt),
        ]
    }

    /// The columns of `apple_sighting` the store writes, in the order of ``values(of:runID:)``.
    static let sightingColumns =
        transactionColumns + [
            "sighting_id", "source_kind", "source_name", "source_ref", "payload_hash", "receipt_key", "receipt_status",
            "submitted_by_user_id", "submitted_order_id", "received_at", "verification", "verification_reason",
            "verification_detail", "anomalies", "first_run_id",
        ]

    /// A sighting's values in ``sightingColumns`` order; `sightingID` is `s.sightingID` (a SHA-256, computed
    /// once per write by the caller) and `transactionValues` is `values(of: s.transaction)`.
    static func values(of s: AppleSighting, sightingID: String, transactionValues: [SQLValue], runID: Int64)
        -> [SQLValue]
    {
        transactionValues + [
            .text(sightingID), .text(s.sourceKind.rawValue), .text(s.sourceName), .text(s.sourceRef),
            .text(s.payloadHash), .of(s.receiptKey), .of(s.receiptStatus), .of(s.submittedByUserID),
            .of(s.submittedOrderID), .of(s.receivedAt), .text(s.verification.status.rawValue),
            .of(s.verification.reason), .of(s.verification.detail), .of(anomalies(of: s)), .integer(runID),
        ]
    }

    /// The `anomalies` column: comma-separated, NULL when there are none.
    static func anomalies(of s: AppleSighting) -> String? {
        s.anomalies.isEmpty ? nil : s.anomalies.joined(separator: ",")
    }

    /// The bookkeeping columns of a new canonical `apple_transaction` row, after the transaction columns.
    static let canonicalColumns = [
        "source_kind", "verification", "best_sighting_id", "sighting_count", "conflict_count", "first_run_id",
        "last_run_id",
    ]

    /// The bookkeeping values of a canonical row first made from sighting `s` (whose id is `sightingID`).
    static func canonicalValues(of s: AppleSighting, sightingID: String, runID: Int64) -> [SQLValue] {
        [
            .text(s.sourceKind.rawValue), .text(s.verification.status.rawValue), .text(sightingID), .integer(1),
            .integer(0), .integer(runID), .integer(runID),
        ]
    }

    /// The content hash of a backend row (orders, credits): decides "unchanged" on re-ingest. SHA-256 (hex)
    /// of the values' text joined by U+001F, NULL as U+0000 — built in one byte buffer.
    static func rowHash(_ values: [SQLValue]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        for (index, value) in values.enumerated() {
            if index > 0 { bytes.append(0x1F) }
            switch value {
            case .null: bytes.append(0)
            case .text(let text): bytes.append(contentsOf: text.utf8)
            case .integer(let number): bytes.append(contentsOf: String(number).utf8)
            case .real(let number): bytes.append(contentsOf: String(number).utf8)
            }
        }
        return hex(SHA256.hash(data: bytes))
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    /// A digest as lower-case hex.
    static func hex(_ digest: SHA256.Digest) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(SHA256.Digest.byteCount * 2)
        for byte in digest {
            text.append(hexDigits[Int(byte >> 4)])
            text.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    // MARK: Statements (built once)

    /// A backend table keyed by its first column (orders, credits): its statements, built once.
    struct KeyedTable: Sendable {
        let name: String
        let entity: String
        let columns: [String]
        /// `name = ?` for each column.
        let assignments: [String]
        /// `row_hash` and the columns, by key.
        let selectSQL: String
        /// The columns, then `source_name, source_ref, row_hash, first_run_id, last_run_id`.
        let insertSQL: String
        /// The same insert, doing nothing when the key exists.
        let insertIfNewSQL: String

        init(name: String, entity: String, columns: [String]) {
            self.name = name
            self.entity = entity
            self.columns = columns
            assignments = columns.map { "\($0) = ?" }
            selectSQL = "SELECT row_hash, \(columns.joined(separator: ", ")) FROM \(name) WHERE \(columns[0]) = ?"
            let all = columns + ["source_name", "source_ref", "row_hash", "first_run_id", "last_run_id"]
            insertSQL = StoreRecords.insertSQL(name, all)
            insertIfNewSQL = insertSQL + " ON CONFLICT (\(columns[0])) DO NOTHING"
        }
    }

    static let orderTable = KeyedTable(name: "backend_order", entity: "order", columns: orderColumns)
    static let creditTable = KeyedTable(name: "credit", entity: "credit", columns: creditColumns)
    /// Ledger entries with negative units (``CreditClawbackSchema``), keyed by their own `credit_id`.
    static let clawbackTable = KeyedTable(name: "credit_clawback", entity: "clawback", columns: clawbackColumns)
    static let userTable = KeyedTable(name: "user_account", entity: "user", columns: userColumns)

    static let userColumns = ["user_id", "country", "app_account_token", "application_username", "created_at"]

    static func values(of u: UserAccount) -> [SQLValue] {
        [.text(u.userID), .of(u.country), .of(u.appAccountToken), .of(u.applicationUsername), .of(u.createdAt)]
    }

    /// `INSERT INTO table (columns) VALUES (?, …)`.
    static func insertSQL(_ table: String, _ columns: [String]) -> String {
        let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
        return "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))"
    }

    static let insertSightingSQL =
        insertSQL("apple_sighting", sightingColumns) + " ON CONFLICT (sighting_id) DO NOTHING"
    static let insertCanonicalSQL = insertSQL("apple_transaction", transactionColumns + canonicalColumns)
    static let insertCanonicalIfNewSQL = insertCanonicalSQL + " ON CONFLICT (transaction_id) DO NOTHING"
    /// The canonical row's transaction columns, then `verification`.
    static let selectCanonicalSQL =
        "SELECT \(transactionColumns.joined(separator: ", ")), verification FROM apple_transaction WHERE transaction_id = ?"
    /// `name = ?` for each transaction column.
    static let transactionAssignments = transactionColumns.map { "\($0) = ?" }
    static let signedDateIndex = transactionColumns.firstIndex(of: "signed_date") ?? 0
    /// The revocation fields: Apple's newest signed copy decides them together (a copy without them clears
    /// them), see ``SQLBackedStore/updateCanonical(_:sightingID:transactionValues:existing:runID:)``.
    static let revocationColumns = ["revocation_date", "revocation_reason", "revocation_type", "revocation_percentage"]
    /// Whether a copy reports a refund or revocation (any revocation field).
    static func carriesRevocation(_ t: AppleTransaction) -> Bool {
        t.revocationDate != nil || t.revocationReason != nil || t.revocationType != nil || t.revocationPercentage != nil
    }
    static let revocationIndexes = transactionColumns.indices.filter {
        revocationColumns.contains(transactionColumns[$0])
    }
    static let identityIndexes = transactionColumns.indices.filter { identityColumns.contains(transactionColumns[$0]) }
    /// The canonical row's revocation fields, then `signed_date`.
    static let selectRevocationSQL =
        "SELECT \(revocationColumns.joined(separator: ", ")), signed_date FROM apple_transaction WHERE transaction_id = ?"
    /// When Apple last signed a verified reversal of a transaction's refund.
    static let latestReversalSQL = """
        SELECT MAX(signed_date) FROM notification
        WHERE transaction_id = ? AND notification_type = 'REFUND_REVERSED' AND verification = 'verified'
        """
    static let insertChangeSQL =
        "INSERT INTO change_log (run_id, entity, entity_key, field, old_value, new_value) VALUES (?, ?, ?, ?, ?, ?)"
    static let insertQuarantineSQL = """
        INSERT INTO quarantine (run_id, source_name, location, reason, raw_excerpt, raw_hash, seen_run_id)
        VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (source_name, location, raw_hash) DO NOTHING
        """

    /// Stamps a quarantined record read again (the insert found it) with the run that read it.
    static let markQuarantineSeenSQL = """
        UPDATE quarantine SET seen_run_id = ? WHERE source_name = ? AND location = ? AND raw_hash = ?
        """

    // MARK: Notifications

    static let notificationColumns = [
        "notification_uuid", "notification_type", "subtype", "signed_date", "environment", "bundle_id",
        "app_apple_id", "transaction_id", "original_transaction_id", "product_id", "revocation_date",
        "revocation_reason", "revocation_percentage", "auto_renew_product_id", "auto_renew_status",
        "consumption_request_reason", "verification", "verification_reason", "verification_detail", "source_name",
        "source_ref", "payload_hash", "first_run_id", "app_transaction_id", "unknown_fields", "renewal_info",
        "grace_period_expires_date",
    ]

    static func values(of n: AppleNotification, runID: Int64) -> [SQLValue] {
        [
            .text(n.notificationUUID), .of(n.notificationType), .of(n.subtype), .of(n.signedDate), .of(n.environment),
            .of(n.bundleID), .of(n.appAppleID), .of(n.transactionID), .of(n.originalTransactionID), .of(n.productID),
            .of(n.revocationDate), .of(n.revocationReason), .of(n.revocationPercentage), .of(n.autoRenewProductID),
            .of(n.autoRenewStatus), .of(n.consumptionRequestReason), .text(n.verification.status.rawValue),
            .of(n.verification.reason), .of(n.verification.detail), .text(n.sourceName), .text(n.sourceRef),
            .text(n.payloadHash), .integer(runID), .of(n.appTransactionID), .of(n.unknownFields),
            .of(n.renewalInfo), .of(n.gracePeriodExpiresDate),
        ]
    }

    static let insertNotificationSQL = insertSQL("notification", notificationColumns)
    static let insertNotificationIfNewSQL = insertNotificationSQL + " ON CONFLICT (notification_uuid) DO NOTHING"
    /// A stored notification's `verification` and `payload_hash`.
    static let selectNotificationSQL = "SELECT verification, payload_hash FROM notification WHERE notification_uuid = ?"
}
