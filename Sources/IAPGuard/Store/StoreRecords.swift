/// The record shapes the store writes: column lists in schema order, a record's values in that order, and
/// the counts one written record adds. Shared by every ``SQLBackedStore``.
enum StoreRecords {
    /// The counts one written record adds (a quarantined record counts as an error).
    static func one(inserted: Bool = false, updated: Bool = false, error: Bool = false) -> WriteCounts {
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

    static func values(of s: AppleSighting, runID: Int64) -> [SQLValue] {
        values(of: s.transaction) + [
            .text(s.sightingID), .text(s.sourceKind.rawValue), .text(s.sourceName), .text(s.sourceRef),
            .text(s.payloadHash), .of(s.receiptKey), .of(s.receiptStatus), .of(s.submittedByUserID),
            .of(s.submittedOrderID), .of(s.receivedAt), .text(s.verification.status.rawValue),
            .of(s.verification.reason), .of(s.verification.detail),
            .of(s.anomalies.isEmpty ? nil : s.anomalies.joined(separator: ",")), .integer(runID),
        ]
    }

    /// The bookkeeping columns of a new canonical `apple_transaction` row, after the transaction columns.
    static let canonicalColumns = [
        "source_kind", "verification", "best_sighting_id", "sighting_count", "conflict_count", "first_run_id",
        "last_run_id",
    ]

    /// The bookkeeping values of a canonical row first made from sighting `s`.
    static func canonicalValues(of s: AppleSighting, runID: Int64) -> [SQLValue] {
        [
            .text(s.sourceKind.rawValue), .text(s.verification.status.rawValue), .text(s.sightingID), .integer(1),
            .integer(0), .integer(runID), .integer(runID),
        ]
    }

    /// The content hash of a backend row (orders, credits): decides "unchanged" on re-ingest.
    static func rowHash(_ values: [SQLValue]) -> String {
        Hashing.sha256Hex(values.map { $0.isNull ? "\u{0}" : $0.description }.joined(separator: "\u{1F}"))
    }
}
