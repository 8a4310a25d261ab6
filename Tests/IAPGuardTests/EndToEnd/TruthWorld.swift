import Foundation
import Logging
import Testing

@testable import IAPGuard
@testable import IAPGuardSampleWorld

/// A generated world with its `truth.jsonl`, run through the pipeline: what the end-to-end truth tests share.
struct TruthWorld {
    /// One active hit finding, by the columns truth lines name.
    struct Row: Sendable {
        var ruleID: String
        var level: String
        var transactionID: String?
        var originalTransactionID: String?
        var orderID: String?
        var userID: String?
    }

    let directory: URL
    let config: Config
    let pipeline: Pipeline
    /// The world's end, the runs' `until`.
    let end: Int64

    /// Generates a world with the shipped rules into a fresh scratch folder named `name`.
    init(name: String, seed: UInt64, users: Int, days: Int) throws {
        // Tests/IAPGuardTests/EndToEnd/<this file> → the repository root.
        var root = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { root.deleteLastPathComponent() }
        directory = TestScratch.root.appendingPathComponent("\(name)-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.removeItem(at: directory)
        end = WorldGenerator.defaultEnd
        _ = try WorldGenerator(
            options: .init(
                seed: seed, users: users, days: days, end: end, rulesPath: root.appendingPathComponent("rules").path)
        ).write(to: directory)
        config = try Config.load(from: directory.appendingPathComponent("iapguard.yml"))
        let logger = Logger(label: "iapguard.test", factory: { _ in SwiftLogNoOpLogHandler() })
        pipeline = Pipeline(config: config, verifier: try JWSVerifier.make(for: config), logger: logger)
    }

    /// The active (new or recurring) hit findings; informational ones only when `informational`.
    func hitRows(informational: Bool = true) throws -> [Row] {
        let store = try SQLiteStore(path: config.storePath.path, readOnly: true)
        var rows: [Row] = []
        for v in try store.database.query(
            """
            SELECT rule_id, level, transaction_id, original_transaction_id, order_id, user_id FROM findings
            WHERE outcome = 'hit' AND status IN ('new', 'recurring')
            """)
        where informational || v[1].textValue != "informational" {
            rows.append(
                Row(
                    ruleID: v[0].textValue ?? "", level: v[1].textValue ?? "", transactionID: v[2].textValue,
                    originalTransactionID: v[3].textValue, orderID: v[4].textValue, userID: v[5].textValue))
        }
        return rows
    }

    /// The truth lines, string values only.
    func truth() throws -> [[String: String]] {
        try String(contentsOf: directory.appendingPathComponent("truth.jsonl"), encoding: .utf8)
            .split(separator: "\n").map {
                try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
                    .compactMapValues { $0 as? String }
            }
    }

    /// The injected incidents of a truth file: runs of consecutive `hit` lines of one pattern (the generator
    /// writes a scenario's lines together, and neighbouring scenarios have different patterns; `evidence`
    /// lines of the same pattern do not break a run).
    static func incidents(_ truth: [[String: String]]) -> [[[String: String]]] {
        var out: [[[String: String]]] = []
        var previous: String?
        var open = false
        for line in truth {
            let pattern = line["pattern"] ?? ""
            defer { previous = pattern }
            if pattern != previous { open = false }
            guard line["expect"] == "hit" else { continue }
            if open, let last = out.indices.last {
                out[last].append(line)
            } else {
                out.append([line])
                open = true
            }
        }
        return out
    }

    /// Whether a finding is about the entity a truth line names: the same transaction, original transaction
    /// or order; or the same user for findings that are about a user, not a transaction.
    static func sameEntity(_ truth: [String: String], _ row: Row) -> Bool {
        let pairs: [(String, String?)] = [
            ("transaction_id", row.transactionID), ("original_transaction_id", row.originalTransactionID),
            ("order_id", row.orderID),
        ]
        for (key, value) in pairs {
            if let expected = truth[key], let value, expected == value { return true }
        }
        if let user = truth["user_id"], row.transactionID == nil, row.userID == user { return true }
        return false
    }
}
