import Foundation

/// Findings persistence for every SQL-backed store (SQLite and PostgreSQL run the same statements).
extension SQLBackedStore {
    public func saveFindings(_ result: RuleRunResult, runID: Int64) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        func json<T: Encodable>(_ value: T) throws -> String {
            String(decoding: try encoder.encode(value), as: UTF8.self)
        }
        // Evidence and entity keys are most of the bytes: written by hand, same bytes as `encoder`.
        let evidenceJSON = EvidenceJSON()
        let carried = Set(result.carriedFindingIDs)
        try connection.transaction {
            try saveCarriedFindings(result.carriedFindingIDs, runID: runID)
            for f in result.findings where !carried.contains(f.findingID) {
                let evidence = try evidenceJSON.encode(f.evidence)
                let suppression: SQLValue = try f.suppression.map { .text(try json($0)) } ?? .null
                let seen = f.status != .resolved
                try connection.run(
                    """
                    INSERT INTO finding (finding_id, rule_id, rule_version, rule_title, entity_key, level, status, outcome,
                        inconclusive_reason, transaction_id, original_transaction_id, order_id, user_id, bundle_id,
                        product_id, storefront, amount, currency, amount_ref, observed, threshold, summary,
                        evidence_json, suppression_json, first_run_id, last_seen_run_id, last_run_id)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (finding_id) DO UPDATE SET
                        rule_version = excluded.rule_version, rule_title = excluded.rule_title,
                        entity_key = excluded.entity_key, level = excluded.level, status = excluded.status,
                        outcome = excluded.outcome, inconclusive_reason = excluded.inconclusive_reason,
                        transaction_id = excluded.transaction_id,
                        original_transaction_id = excluded.original_transaction_id, order_id = excluded.order_id,
                        user_id = excluded.user_id, bundle_id = excluded.bundle_id, product_id = excluded.product_id,
                        storefront = excluded.storefront, amount = excluded.amount, currency = excluded.currency,
                        amount_ref = excluded.amount_ref, observed = excluded.observed, threshold = excluded.threshold,
                        summary = excluded.summary, evidence_json = excluded.evidence_json,
                        suppression_json = excluded.suppression_json,
                        last_seen_run_id = CASE WHEN ? = 1 THEN excluded.last_seen_run_id ELSE finding.last_seen_run_id END,
                        last_run_id = excluded.last_run_id
                    """,
                    [
                        .text(f.findingID), .text(f.ruleID), .text(f.ruleVersion), .text(f.ruleTitle),
                        .text(try evidenceJSON.encode(f.entityKey)), .text(f.level.rawValue), .text(f.status.rawValue),
                        .text(f.outcome.rawValue), .of(f.inconclusiveReason), .of(f.transactionID),
                        .of(f.originalTransactionID), .of(f.orderID), .of(f.userID), .of(f.bundleID), .of(f.productID),
                        .of(f.storefront), .of(f.amount), .of(f.currency), .of(f.amountRef), .of(f.observed),
                        .of(f.threshold), .text(f.summary), .text(evidence), suppression, .integer(f.firstSeenRunID),
                        .integer(runID), .integer(runID), .integer(seen ? 1 : 0),
                    ])
                try connection.run(
                    """
                    INSERT INTO finding_run (run_id, finding_id, rule_id, rule_version, level, status, outcome,
                        inconclusive_reason, amount_ref, observed, threshold, summary, evidence_json)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (run_id, finding_id) DO UPDATE SET status = excluded.status, level = excluded.level,
                        outcome = excluded.outcome, summary = excluded.summary, evidence_json = excluded.evidence_json
                    """,
                    [
                        .integer(runID), .text(f.findingID), .text(f.ruleID), .text(f.ruleVersion),
                        .text(f.level.rawValue),
                        .text(f.status.rawValue), .text(f.outcome.rawValue), .of(f.inconclusiveReason),
                        .of(f.amountRef),
                        .of(f.observed), .of(f.threshold), .text(f.summary), .text(evidence),
                    ])
            }
            for s in result.stats {
                try connection.run(
                    """
                    INSERT INTO rule_run (run_id, rule_id, rule_version, rule_status, hits, inconclusive, suppressed,
                        resolved, error, query_millis) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    ON CONFLICT (run_id, rule_id) DO UPDATE SET rule_version = excluded.rule_version,
                        rule_status = excluded.rule_status, hits = excluded.hits, inconclusive = excluded.inconclusive,
                        suppressed = excluded.suppressed, resolved = excluded.resolved, error = excluded.error,
                        query_millis = excluded.query_millis
                    """,
                    [
                        .integer(runID), .text(s.ruleID), .text(s.ruleVersion), .text(s.ruleStatus.rawValue),
                        .integer(Int64(s.hits)), .integer(Int64(s.inconclusive)), .integer(Int64(s.suppressed)),
                        .integer(Int64(s.resolved)), .of(s.error), .real(s.queryMillis),
                    ])
            }
        }
    }

    /// Puts the ids of a run's carried-over findings into the scratch table `finding_carry` (replacing what
    /// it held), for the set-based statements of ``saveFindings(_:runID:)`` and the rewind's undo record.
    public func stageCarriedFindings(_ findingIDs: [String]) throws {
        try connection.run("DELETE FROM finding_carry", [])
        for id in Set(findingIDs).sorted() {
            try connection.run("INSERT INTO finding_carry (finding_id) VALUES (?)", [.text(id)])
        }
    }

    /// Moves carried-over findings to `runID` with set-based SQL: their stored content stays as it is (a
    /// full evaluation would produce it again), status becomes `recurring` (`suppressed` stays), both run
    /// ids become this run, and this run's history (`finding_run`) gets a copy of each row. Same rows as
    /// writing each finding again.
    func saveCarriedFindings(_ findingIDs: [String], runID: Int64) throws {
        guard !findingIDs.isEmpty else { return }
        try stageCarriedFindings(findingIDs)
        try connection.run(
            """
            UPDATE finding SET status = CASE WHEN status = 'suppressed' THEN 'suppressed' ELSE 'recurring' END,
                last_seen_run_id = ?, last_run_id = ?
            WHERE finding_id IN (SELECT finding_id FROM finding_carry)
            """, [.integer(runID), .integer(runID)])
        try connection.run(
            """
            INSERT INTO finding_run (run_id, finding_id, rule_id, rule_version, level, status, outcome,
                inconclusive_reason, amount_ref, observed, threshold, summary, evidence_json)
            SELECT ?, finding_id, rule_id, rule_version, level, status, outcome, inconclusive_reason, amount_ref,
                observed, threshold, summary, evidence_json
            FROM finding WHERE finding_id IN (SELECT finding_id FROM finding_carry)
            ON CONFLICT (run_id, finding_id) DO UPDATE SET status = excluded.status, level = excluded.level,
                outcome = excluded.outcome, summary = excluded.summary, evidence_json = excluded.evidence_json
            """, [.integer(runID)])
        try connection.run("DELETE FROM finding_carry", [])
    }
}
