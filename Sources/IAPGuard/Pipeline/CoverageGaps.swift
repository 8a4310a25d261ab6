/// The credits IAP-012 cannot check: standing credits whose purchase carries no appAccountToken and no
/// applicationUsername, or a marker no account owns. The report's coverage line counts them by the source
/// of the Apple record.
///
/// Telling whether a credit is one reads its transaction, its orders and the accounts and orders carrying
/// its marker: about 1.7 s for a million credits. The store keeps the credits found (`coverage_gap`,
/// migration 20) with the run that last brought them up to date (`coverage_state`), so a daily run
/// re-tells only the credits in its scope: the shared scope (``ScopeBuilder``) widened by the purchases
/// carrying its tokens and usernames, under ``scopeID``. Every change that can move a credit in or out (its
/// own row, its transaction's, its orders', an account or order taking or dropping its marker) brings the
/// credit into that scope. Any other run, and one where too many purchases carry the scope's markers,
/// re-tells every credit.
struct CoverageGaps {
    let connection: any SQLExecutor

    /// The `incremental_scope` rule id the coverage line's widened keys are kept under.
    static let scopeID = "~coverage"
    /// The shared kinds a credit's coverage follows: another order or account carrying its marker.
    static let sharedKeys: Set<ScopeKind> = [.appAccountToken, .applicationUsername]

    /// Rows `(credit_id, source_kind, reversed_at)` of the credits that are gaps, reversed or not (a
    /// credit's standing depends on `:now` and is applied when counting). `scoped`: only the credits in the
    /// shared scope. `credited` is materialized (SQLite 3.35+, PostgreSQL 12+): inlined, its `username`
    /// subquery ran once per reference.
    static func rowsSQL(scoped: Bool) -> String {
        let scope =
            scoped
            ? "\n      AND c.credit_id IN (SELECT scope_key FROM incremental_scope WHERE rule_id IN ('', '\(scopeID)') AND kind = 'credit_id')"
            : ""
        return """
            WITH credited AS MATERIALIZED (
                SELECT c.credit_id, c.reversed_at, t.source_kind, LOWER(t.app_account_token) AS token,
                       CASE WHEN t.app_account_token IS NULL THEN
                         (SELECT MIN(o.application_username) FROM orders o
                          WHERE o.transaction_id = c.transaction_id AND o.application_username IS NOT NULL) END AS username
                FROM credits c LEFT JOIN transactions t ON t.transaction_id = c.transaction_id
                WHERE c.transaction_id IS NOT NULL AND c.user_id IS NOT NULL\(scope)
            )
            SELECT credit_id, source_kind, reversed_at FROM credited k
            WHERE (k.token IS NULL AND k.username IS NULL)
               OR (k.token IS NOT NULL
                   AND NOT EXISTS (SELECT 1 FROM users u WHERE LOWER(u.app_account_token) = k.token)
                   AND NOT EXISTS (SELECT 1 FROM orders o WHERE LOWER(o.app_account_token) = k.token))
               OR (k.username IS NOT NULL
                   AND NOT EXISTS (SELECT 1 FROM users u WHERE u.application_username = k.username)
                   AND NOT EXISTS (SELECT 1 FROM orders o WHERE o.application_username = k.username))
            """
    }

    /// Standing gaps at `:now` by source kind (NULL: no Apple record).
    static let countsSQL = """
        SELECT source_kind, COUNT(*) FROM coverage_gap
        WHERE reversed_at IS NULL OR reversed_at > ?
        GROUP BY source_kind
        """

    /// Re-tells the credits of the scope (``scopeID``, widened first) when the kept gaps were up to date at a run no earlier
    /// than `scopeSince`, the run the scope's changes are counted from; returns false (nothing done) when
    /// there is no scope or the kept gaps are older. Runs inside the rule stage's transaction, which holds
    /// the scope.
    func refreshScoped(scopeSince: Int64?, runID: Int64) throws -> Bool {
        guard let scopeSince,
            let kept = try connection.query("SELECT MAX(run_id) FROM coverage_state", []).first?.first?.integerValue,
            kept >= scopeSince
        else { return false }
        _ = try connection.run(
            "DELETE FROM coverage_gap WHERE credit_id IN (SELECT scope_key FROM incremental_scope WHERE rule_id IN ('', '\(Self.scopeID)') AND kind = 'credit_id')",
            [])
        _ = try connection.run(
            "INSERT INTO coverage_gap (credit_id, source_kind, reversed_at) " + Self.rowsSQL(scoped: true), [])
        try markUpToDate(runID: runID)
        return true
    }

    /// Replaces the kept gaps with `rows` (of ``rowsSQL(scoped:)`` over every credit).
    func replace(with rows: [[SQLValue]], runID: Int64) throws {
        _ = try connection.run("DELETE FROM coverage_gap", [])
        for row in rows where row.count == 3 {
            _ = try connection.run(
                "INSERT INTO coverage_gap (credit_id, source_kind, reversed_at) VALUES (?, ?, ?)", row)
        }
        try markUpToDate(runID: runID)
    }

    /// The standing gaps at `now`, by source kind.
    func counts(now: Int64) throws -> [[SQLValue]] {
        try connection.query(Self.countsSQL, [.integer(now)])
    }

    private func markUpToDate(runID: Int64) throws {
        _ = try connection.run("DELETE FROM coverage_state", [])
        _ = try connection.run("INSERT INTO coverage_state (run_id) VALUES (?)", [.integer(runID)])
    }
}
