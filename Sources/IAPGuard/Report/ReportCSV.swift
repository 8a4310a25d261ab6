import Foundation

/// `findings.csv` and `evidence.csv`: column orders are part of the contract (`docs/reports.md`); new
/// columns are only ever added at the end.
enum ReportCSV {
    /// `findings.csv` columns, in order.
    static let findingColumns = [
        "finding_id", "run_id", "rule_id", "rule_version", "level", "status", "transaction_id",
        "original_transaction_id", "order_id", "user_id", "bundle_id", "product_id", "storefront", "amount",
        "currency", "amount_ref", "observed", "threshold", "summary",
        // Added after the required columns:
        "outcome", "inconclusive_reason", "suppressed_by", "suppression_reason", "suppression_expires",
        "first_seen_run_id", "rule_title", "ref_currency", "evidence_rows",
    ]

    /// `evidence.csv` columns, in order (long format: one line per evidence field).
    static let evidenceColumns = ["finding_id", "row_index", "kind", "field", "value", "rule_id", "run_id"]

    /// `cases.csv` columns, in order: one line per case, in queue order (`priority` 1 first).
    static let caseColumns = [
        "case_id", "priority", "level", "money_at_risk", "rules", "anchor_transaction_id", "gaining_user_id",
        "losing_user_id", "status", "first_seen", "last_seen", "summary",
        // Added after the required columns:
        "ref_currency", "findings", "finding_ids", "status_by", "status_note", "reopened", "first_seen_run_id",
        "last_seen_run_id",
    ]

    static func cases(_ model: ReportModel) -> String {
        var table = CSVTable(header: caseColumns)
        try? caseRows(model, into: &table, flush: { _ in })
        return table.text
    }

    /// Writes `cases.csv` to `url`, streaming.
    static func writeCases(_ model: ReportModel, to url: URL) throws {
        try stream(to: url, header: caseColumns) { table, flush in
            try caseRows(model, into: &table, flush: flush)
        }
    }

    private static func caseRows(
        _ model: ReportModel, into table: inout CSVTable, flush: (inout CSVTable) throws -> Void
    ) throws {
        for (index, c) in model.cases.enumerated() {
            table.append([
                c.caseID, String(index + 1), c.level.rawValue, ReportFormat.decimal(milliunits: c.moneyAtRisk),
                c.rules.joined(separator: " "), c.anchorTransactionID, c.gainingUserID, c.losingUserID,
                c.status.rawValue, c.firstSeenAt.map(TimeParser.iso8601), c.lastSeenAt.map(TimeParser.iso8601),
                c.summary, model.input.referenceCurrency, String(c.findingIDs.count),
                c.findingIDs.joined(separator: " "), c.statusBy, c.statusNote, c.reopenedThisRun ? "yes" : "no",
                String(c.firstSeenRunID), String(c.lastSeenRunID),
            ])
            if table.pendingByteCount >= flushBytes { try flush(&table) }
        }
    }

    static func findings(_ model: ReportModel) -> String {
        var table = CSVTable(header: findingColumns)
        try? findingRows(model, into: &table, flush: { _ in })
        return table.text
    }

    static func evidence(_ model: ReportModel) -> String {
        var table = CSVTable(header: evidenceColumns)
        try? evidenceRows(model, into: &table, flush: { _ in })
        return table.text
    }

    /// Writes `findings.csv` to `url`, streaming (memory stays bounded by ``flushBytes``).
    static func writeFindings(_ model: ReportModel, to url: URL) throws {
        try stream(to: url, header: findingColumns) { table, flush in
            try findingRows(model, into: &table, flush: flush)
        }
    }

    /// Writes `evidence.csv` to `url`, streaming.
    static func writeEvidence(_ model: ReportModel, to url: URL) throws {
        try stream(to: url, header: evidenceColumns) { table, flush in
            try evidenceRows(model, into: &table, flush: flush)
        }
    }

    /// Bytes buffered before they go to the file.
    static let flushBytes = 1 << 20

    private static func stream(
        to url: URL, header: [String],
        _ body: (inout CSVTable, (inout CSVTable) throws -> Void) throws -> Void
    ) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw ReportError.cannotWrite(path: url.path, reason: "cannot create the file")
        }
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var table = CSVTable(header: header)
        let flush: (inout CSVTable) throws -> Void = { table in
            try handle.write(contentsOf: table.takeBytes())
        }
        try body(&table, flush)
        try flush(&table)
    }

    private static func findingRows(
        _ model: ReportModel, into table: inout CSVTable, flush: (inout CSVTable) throws -> Void
    ) throws {
        for f in model.findings {
            table.append([
                f.findingID, String(f.runID), f.ruleID, f.ruleVersion, f.level.rawValue, f.status.rawValue,
                f.transactionID, f.originalTransactionID, f.orderID, f.userID, f.bundleID, f.productID, f.storefront,
                f.amount.map { ReportFormat.decimal(milliunits: $0) }, f.currency,
                f.amountRef.map { ReportFormat.decimal(milliunits: $0) }, f.observed, f.threshold, f.summary,
                f.outcome.rawValue, f.inconclusiveReason, f.suppression?.owner, f.suppression?.reason,
                f.suppression?.expires, String(f.firstSeenRunID), f.ruleTitle,
                f.amountRef == nil ? nil : model.input.referenceCurrency, String(f.evidence.count),
            ])
            if table.pendingByteCount >= flushBytes { try flush(&table) }
        }
    }

    private static func evidenceRows(
        _ model: ReportModel, into table: inout CSVTable, flush: (inout CSVTable) throws -> Void
    ) throws {
        for f in model.findings {
            let runID = String(f.runID)
            for (index, row) in f.evidence.enumerated() {
                let rowIndex = String(index + 1)
                for field in row.fields {
                    table.append([
                        f.findingID, rowIndex, row.kind, field.name,
                        ReportFormat.evidenceValue(name: field.name, value: field.value), f.ruleID, runID,
                    ])
                }
            }
            if table.pendingByteCount >= flushBytes { try flush(&table) }
        }
    }
}
