import Foundation
import IAPGuard
import IAPGuardTesting

/// The open output files of a world being written, with the record serialisers. Records go to disk as
/// they are produced; only counters are kept.
final class WorldSink {
    private let receipts: WorldFileWriter
    private let transactions: WorldFileWriter
    private let notifications: WorldFileWriter
    private let orders: WorldFileWriter
    private let credits: WorldFileWriter
    private let users: WorldFileWriter
    private let truth: WorldFileWriter
    private let signer: any JWSSigning
    private let foreignSigner: any JWSSigning
    private(set) var purchases = 0
    private(set) var truthByPattern: [String: Int] = [:]
    private(set) var truthByRule: [String: Int] = [:]

    static let orderColumns = [
        "order_id", "user_id", "bundle_id", "product_id", "quantity", "price", "currency", "storefront",
        "user_country", "created_at", "status", "transaction_id", "app_account_token", "application_username",
        "environment",
    ]

    init(directory: URL, signer: any JWSSigning, foreignSigner: any JWSSigning) throws {
        let data = directory.appendingPathComponent("data")
        receipts = try WorldFileWriter(url: data.appendingPathComponent("receipts.jsonl"))
        transactions = try WorldFileWriter(url: data.appendingPathComponent("transactions.jsonl"))
        notifications = try WorldFileWriter(url: data.appendingPathComponent("notifications.jsonl"))
        orders = try WorldFileWriter(url: data.appendingPathComponent("orders.csv"))
        credits = try WorldFileWriter(url: data.appendingPathComponent("credits.jsonl"))
        users = try WorldFileWriter(url: data.appendingPathComponent("users.csv"))
        truth = try WorldFileWriter(url: directory.appendingPathComponent("truth.jsonl"))
        self.signer = signer
        self.foreignSigner = foreignSigner
        try orders.writeCSVLine(WorldSink.orderColumns.joined(separator: ","))
        try users.writeCSVLine(WorldSink.userColumns.joined(separator: ","))
    }

    /// The header of `data/users.csv` (the backend's accounts, `kind: users`).
    static let userColumns = ["user_id", "country", "app_account_token", "application_username", "created_at"]

    /// Writes one account row: home country, the token and username the app attaches for it.
    func account(_ u: UserProfile, createdAt: Int64) throws {
        let fields = [u.id, u.home.code, u.token, u.applicationUsername, String(createdAt)]
        try users.writeCSVLine(fields.map { WorldSink.csvField($0) }.joined(separator: ","))
    }

    /// Line counts per file (relative path), header rows excluded.
    var fileLines: [String: Int] {
        [
            "data/receipts.jsonl": receipts.lines, "data/transactions.jsonl": transactions.lines,
            "data/notifications.jsonl": notifications.lines, "data/orders.csv": orders.lines - 1,
            "data/credits.jsonl": credits.lines, "truth.jsonl": truth.lines, "data/users.csv": users.lines - 1,
        ]
    }

    /// Counts one Apple purchase (initial or renewal).
    func countPurchase() { purchases += 1 }

    /// Signs `payload` with the trusted chain, or the untrusted one when `foreign`.
    func sign(_ payload: WorldJSON, foreign: Bool = false) throws -> String {
        let bytes = Data(payload.serialized.utf8)
        return try (foreign ? foreignSigner : signer).sign(payload: bytes)
    }

    /// A wrapped legacy verifyReceipt response.
    func receipt(userID: String?, orderID: String?, receivedAt: Int64, receiptData: String, response: WorldJSON) throws
    {
        let line = WorldJSON.obj([
            ("user_id", .str(userID)), ("order_id", .str(orderID)), ("received_at", .int(receivedAt)),
            ("receipt_data", .string(receiptData)), ("response", response),
        ])
        try receipts.writeLine(line.serialized)
    }

    /// A signed transaction as the backend received it.
    func signedTransaction(_ jws: String, userID: String?, orderID: String?, receivedAt: Int64) throws {
        let line = WorldJSON.obj([
            ("signedTransactionInfo", .string(jws)), ("user_id", .str(userID)), ("order_id", .str(orderID)),
            ("received_at", .int(receivedAt)),
        ])
        try transactions.writeLine(line.serialized)
    }

    /// A signed notification V2.
    func notification(_ signedPayload: String) throws {
        try notifications.writeLine(WorldJSON.obj([("signedPayload", .string(signedPayload))]).serialized)
    }

    /// An order row.
    func order(_ o: BackendOrder) throws {
        let digits = o.currency.flatMap { c in WorldCatalog.storefronts.first { $0.currency == c }?.minorDigits } ?? 2
        let fields: [String?] = [
            o.orderID, o.userID, o.bundleID, o.productID, o.quantity.map { String($0) },
            o.price.map { WorldCatalog.decimalText(milli: $0, minorDigits: digits) }, o.currency, o.storefront,
            o.userCountry, o.createdAt.map { String($0) }, o.status, o.transactionID, o.appAccountToken,
            o.applicationUsername, o.environment,
        ]
        try orders.writeCSVLine(fields.map { WorldSink.csvField($0 ?? "") }.joined(separator: ","))
    }

    /// A ledger entry.
    func credit(_ c: Credit) throws {
        var fields: [(String, WorldJSON?)] = [
            ("credit_id", .string(c.creditID)), ("transaction_id", .str(c.transactionID)),
            ("order_id", .str(c.orderID)), ("user_id", .str(c.userID)), ("product_id", .str(c.productID)),
            ("units", .num(c.units)), ("credited_at", .num(c.creditedAt)),
            ("reversed_at", c.reversedAt.map { .int($0) } ?? .null), ("reversal_reason", .str(c.reversalReason)),
        ]
        // Consumption only where the simulated backend tracked it (so other lines stay as they were).
        if let consumed = c.consumedUnits, let at = c.consumedAt {
            fields += [("consumed_units", .int(consumed)), ("consumed_at", .int(at))]
        }
        let line = WorldJSON.obj(fields)
        try credits.writeLine(line.serialized)
    }

    /// A truth line.
    func truth(_ t: TruthRecord) throws {
        try truth.writeLine(t.json.serialized)
        truthByPattern[t.pattern, default: 0] += 1
        truthByRule[t.ruleID + " " + t.expectation, default: 0] += 1
    }

    /// RFC 4180 quoting when needed.
    static func csvField(_ value: String) -> String {
        if value.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
            return "\"" + value.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        return value
    }

    /// Flushes and closes every file.
    func close() throws {
        for writer in [receipts, transactions, notifications, orders, credits, users, truth] { try writer.close() }
    }
}
