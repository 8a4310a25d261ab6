/// The incremental evaluation's tables (schema migration 5; pipeline-private, not part of the documented
/// views): the dirty scope of the current rule stage, each rule's last evaluation, and the FX rates the
/// last rule stage saw.
enum IncrementalSchema {
    static let migration = Schema.Migration(version: 5, name: "incremental evaluation", sql: sql)

    static let sql = """
        -- The keys whose findings this rule stage recomputes: rule_id '' is the scope shared by every rule
        -- (rows changed since the last evaluation, closed over the keys rules relate by); a rule's own id
        -- holds the keys its time dependence adds.
        CREATE TABLE incremental_scope (
            rule_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            scope_key TEXT NOT NULL,
            PRIMARY KEY (rule_id, kind, scope_key)
        );
        CREATE INDEX incremental_scope_key ON incremental_scope (kind, scope_key);
        -- Per rule: what its findings were last computed from (a changed fingerprint evaluates it fully).
        CREATE TABLE rule_state (
            rule_id TEXT PRIMARY KEY,
            fingerprint TEXT NOT NULL,
            run_id INTEGER NOT NULL,
            evaluated_now INTEGER NOT NULL,
            mode TEXT NOT NULL,
            priced_at_now INTEGER NOT NULL
        );
        -- The FX rates of the last rule stage, to tell which conversions changed since.
        CREATE TABLE fx_rate_seen (
            currency TEXT NOT NULL,
            rate_date INTEGER NOT NULL,
            per_eur REAL NOT NULL,
            PRIMARY KEY (currency, rate_date)
        );
        """
}
