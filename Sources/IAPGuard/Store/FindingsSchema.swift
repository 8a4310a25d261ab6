/// The findings tables (schema migration 2): the current state of every finding, its per-run history and
/// per-rule run statistics, with the public read-only views `findings`, `finding_history` and `rule_runs`.
enum FindingsSchema {
    static let migration = Schema.Migration(version: 2, name: "findings", sql: sql)

    static let sql = """
        -- The current state of every finding ever raised (one row per finding_id).
        CREATE TABLE finding (
            finding_id TEXT PRIMARY KEY,
            rule_id TEXT NOT NULL,
            rule_version TEXT NOT NULL,
            rule_title TEXT NOT NULL,
            entity_key TEXT NOT NULL,
            level TEXT NOT NULL,
            status TEXT NOT NULL,
            outcome TEXT NOT NULL,
            inconclusive_reason TEXT,
            transaction_id TEXT,
            original_transaction_id TEXT,
            order_id TEXT,
            user_id TEXT,
            bundle_id TEXT,
            product_id TEXT,
            storefront TEXT,
            amount INTEGER,
            currency TEXT,
            amount_ref INTEGER,
            observed TEXT,
            threshold TEXT,
            summary TEXT NOT NULL,
            evidence_json TEXT NOT NULL,
            suppression_json TEXT,
            first_run_id INTEGER NOT NULL,
            last_seen_run_id INTEGER NOT NULL,
            last_run_id INTEGER NOT NULL
        );
        CREATE INDEX finding_rule ON finding (rule_id, status);
        CREATE INDEX finding_transaction ON finding (transaction_id);
        CREATE INDEX finding_user ON finding (user_id);
        CREATE INDEX finding_order ON finding (order_id);
        -- What each run said about each finding.
        CREATE TABLE finding_run (
            run_id INTEGER NOT NULL,
            finding_id TEXT NOT NULL,
            rule_id TEXT NOT NULL,
            rule_version TEXT NOT NULL,
            level TEXT NOT NULL,
            status TEXT NOT NULL,
            outcome TEXT NOT NULL,
            inconclusive_reason TEXT,
            amount_ref INTEGER,
            observed TEXT,
            threshold TEXT,
            summary TEXT NOT NULL,
            evidence_json TEXT NOT NULL,
            PRIMARY KEY (run_id, finding_id)
        );
        CREATE INDEX finding_run_finding ON finding_run (finding_id);
        -- Per rule and run: counts and query time.
        CREATE TABLE rule_run (
            run_id INTEGER NOT NULL,
            rule_id TEXT NOT NULL,
            rule_version TEXT NOT NULL,
            rule_status TEXT NOT NULL,
            hits INTEGER NOT NULL,
            inconclusive INTEGER NOT NULL,
            suppressed INTEGER NOT NULL,
            resolved INTEGER NOT NULL,
            error TEXT,
            query_millis REAL NOT NULL,
            PRIMARY KEY (run_id, rule_id)
        );

        CREATE VIEW findings AS
            SELECT finding_id, rule_id, rule_version, rule_title, entity_key, level, status, outcome,
                   inconclusive_reason, transaction_id, original_transaction_id, order_id, user_id, bundle_id,
                   product_id, storefront, amount, currency, amount_ref, observed, threshold, summary,
                   evidence_json, suppression_json, first_run_id, last_seen_run_id, last_run_id
            FROM finding;
        CREATE VIEW finding_history AS
            SELECT run_id, finding_id, rule_id, rule_version, level, status, outcome, inconclusive_reason,
                   amount_ref, observed, threshold, summary, evidence_json
            FROM finding_run;
        CREATE VIEW rule_runs AS
            SELECT run_id, rule_id, rule_version, rule_status, hits, inconclusive, suppressed, resolved, error,
                   query_millis
            FROM rule_run;
        """
}
