import Foundation

/// Inserts test-fixture rows, written in the documented views' column names, into the private tables behind
/// those views, filling the bookkeeping columns (source names, hashes, run ids, ...) with defaults.
///
/// Time columns accept `YYYY-MM-DD` or RFC 3339 text as well as epoch ms. `refunds` is derived (from
/// `notifications` and revoked `transactions`) and cannot be written directly.
public struct RuleFixtureLoader {
    /// View → private table.
    public static let tables: [String: String] = [
        "transactions": "apple_transaction", "sightings": "apple_sighting", "orders": "backend_order",
        "credits": "credit", "notifications": "notification", "apps": "ref_app", "catalog": "ref_product",
        "testers": "ref_tester", "fx_rates": "ref_fx_rate", "runs": "run", "users": "user_account",
        "unchecked_transactions": "api_unchecked", "clawbacks": "credit_clawback",
    ]
    /// Columns holding epoch-ms times.
    public static let timeColumns: Set<String> = [
        "purchase_date", "original_purchase_date", "expires_date", "revocation_date", "signed_date", "received_at",
        "created_at", "credited_at", "reversed_at", "consumed_at", "rate_date", "started_at", "finished_at",
        "window_since",
        "window_until", "grace_period_expires_date",
    ]

    /// An error in a fixture row.
    public struct FixtureError: Error, CustomStringConvertible, Sendable {
        public var line: Int
        public var message: String
        public var description: String { "line \(line): \(message)" }
    }

    let database: any SQLExecutor
    private var counter = 0

    public init(database: any SQLExecutor) {
        self.database = database
    }

    /// Inserts `rows` (view column names) for `view`.
    public mutating func insert(view: String, rows: [RuleTest.FixtureRow]) throws {
        guard let table = Self.tables[view] else {
            let hint = view == "refunds" ? " (refunds is derived: give notifications or revoked transactions)" : ""
            throw FixtureError(
                line: rows.first?.line ?? 0,
                message:
                    "'\(view)' is not a writable view\(hint); use one of \(Self.tables.keys.sorted().joined(separator: ", "))"
            )
        }
        let viewColumns = Set(try database.columnNames(of: view))
        for row in rows {
            counter += 1
            var values: [String: SQLValue] = [:]
            for (column, value) in row.values {
                guard viewColumns.contains(column) else {
                    throw FixtureError(line: row.line, message: "view \(view) has no column '\(column)'")
                }
                values[column] = try Self.normalise(column: column, value: value, line: row.line)
            }
            for (column, value) in defaults(table: table, row: values) where values[column] == nil {
                values[column] = value
            }
            let columns = values.keys.sorted()
            let placeholders = Array(repeating: "?", count: columns.count).joined(separator: ", ")
            do {
                try database.run(
                    "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(placeholders))",
                    columns.map { values[$0] ?? .null })
            } catch {
                throw FixtureError(line: row.line, message: "\(view): \(error)")
            }
        }
    }

    static func normalise(column: String, value: SQLValue, line: Int) throws -> SQLValue {
        guard timeColumns.contains(column), case .text(let text) = value else { return value }
        guard let millis = EpochTime.parse(text) else {
            throw FixtureError(line: line, message: "\(column): not a time: '\(text)'")
        }
        return .integer(millis)
    }

    private func defaults(table: String, row: [String: SQLValue]) -> [String: SQLValue] {
        let n = counter
        let ref: SQLValue = .text("fixture:\(n)")
        switch table {
        case "apple_transaction":
            let id = row["transaction_id"]?.textValue ?? "fixture-\(n)"
            return [
                "transaction_id": .text(id), "source_kind": .text("signed-transaction"),
                "verification": .text("verified"),
                "best_sighting_id": .text("fixture-sighting-\(n)"), "sighting_count": .integer(1),
                "conflict_count": .integer(0), "first_run_id": .integer(1), "last_run_id": .integer(1),
            ]
        case "apple_sighting":
            return [
                "sighting_id": .text("fixture-sighting-\(n)"), "transaction_id": .text("fixture-\(n)"),
                "source_kind": .text("signed-transaction"), "source_name": .text("fixture"), "source_ref": ref,
                "payload_hash": .text("fixture-payload-\(n)"), "verification": .text("verified"),
                "first_run_id": .integer(1),
            ]
        case "backend_order":
            return [
                "order_id": .text("fixture-order-\(n)"), "source_name": .text("fixture"), "source_ref": ref,
                "row_hash": .text("fixture-\(n)"), "first_run_id": .integer(1), "last_run_id": .integer(1),
            ]
        case "credit", "credit_clawback":
            return [
                "credit_id": .text("fixture-credit-\(n)"), "source_name": .text("fixture"), "source_ref": ref,
                "row_hash": .text("fixture-\(n)"), "first_run_id": .integer(1), "last_run_id": .integer(1),
            ]
        case "notification":
            return [
                "notification_uuid": .text("fixture-notification-\(n)"), "verification": .text("verified"),
                "source_name": .text("fixture"), "source_ref": ref, "payload_hash": .text("fixture-payload-\(n)"),
                "first_run_id": .integer(1),
            ]
        case "user_account":
            return [
                "user_id": .text("fixture-user-\(n)"), "source_name": .text("fixture"), "source_ref": ref,
                "row_hash": .text("fixture-\(n)"), "first_run_id": .integer(1), "last_run_id": .integer(1),
            ]
        case "ref_app": return ["environments": .text("Production,Sandbox")]
        case "ref_product": return ["type": .text("Consumable"), "units": .integer(1)]
        case "ref_fx_rate": return ["source": .text("fixture")]
        case "run": return ["started_at": .integer(0), "status": .text("finished"), "tool_version": .text("fixture")]
        case "api_unchecked": return ["source_name": .text("fixture"), "reason": .text("not asked yet")]
        default: return [:]
        }
    }
}
