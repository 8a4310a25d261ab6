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

    static func findings(_ model: ReportModel) -> String {
        var table = CSVTable(header: findingColumns)
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
        }
        return table.text
    }

    static func evidence(_ model: ReportModel) -> String {
        var table = CSVTable(header: evidenceColumns)
        for f in model.findings {
            for (index, row) in f.evidence.enumerated() {
                for field in row.fields {
                    table.append([
                        f.findingID, String(index + 1), row.kind, field.name,
                        ReportFormat.evidenceValue(name: field.name, value: field.value), f.ruleID, String(f.runID),
                    ])
                }
            }
        }
        return table.text
    }
}
