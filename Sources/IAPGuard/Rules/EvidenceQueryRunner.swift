/// Runs a rule's evidence queries for its findings, one finding after the other, so that their cost follows
/// their output rather than the number of findings.
///
/// Each evidence query is made once per rule evaluation as the store's ``RepeatedQuery`` (on SQLite a
/// statement prepared once and re-bound for every finding, reading stopped after the query's `limit` rows).
/// Rows, their order and the limit are the same as running the query once per finding.
///
/// On SQLite, a view that cannot be searched by key from a correlated subquery is read once per runner
/// instead of once per finding (see ``snapshotViews``): SQLite pushes a constant `transaction_id = ?` into
/// the `refunds` view's arms, but not a correlated one, so an evidence query asking for each of an account's
/// transactions "its latest refund" computed the whole view again for every transaction of every finding.
/// The runner copies such a view into a temporary table of the same name, indexed on `transaction_id`,
/// which the connection's queries read in its place (SQLite resolves an unqualified name in `temp` first)
/// until ``close()`` drops it. The copy holds the same rows: the rule stage writes none of the tables the
/// view reads.
final class EvidenceQueryRunner {
    /// Views an evidence query reads per finding that SQLite computes whole each time: name → key column.
    static let snapshotViews: [(view: String, key: String)] = [("refunds", "transaction_id")]

    private let store: any PurchaseStore
    private var queries: [String: any RepeatedQuery] = [:]
    /// Views copied into temporary tables by this runner (dropped by ``close()``).
    private var snapshots: [String] = []

    init(store: any PurchaseStore) {
        self.store = store
    }

    deinit { close() }

    /// Runs `sql` with `parameters` and hands at most `limit` rows, with their column names, to `body`.
    func run(
        _ sql: String, parameters: [String: SQLValue], limit: Int,
        _ body: (_ columns: [String], _ row: [SQLValue]) -> Void
    ) throws {
        guard limit > 0 else { return }
        let query: any RepeatedQuery
        if let prepared = queries[sql] {
            query = prepared
        } else {
            snapshotViews(readBy: sql)
            query = try store.repeatedQuery(sql)
            queries[sql] = query
        }
        try query.run(parameters: parameters, limit: limit, body)
    }

    /// Drops the temporary copies; later queries read the views again.
    func close() {
        queries = [:]
        guard let database = (store as? SQLiteStore)?.database else { return }
        // A statement left busy on the connection makes the drop fail; the copy then stays until the
        // connection closes, holding the same rows as the view (nothing the view reads changes under it).
        for view in snapshots { try? database.execute("DROP TABLE IF EXISTS temp.\(view)") }
        snapshots = []
    }

    /// Copies each of ``snapshotViews`` that `sql` names into its temporary table, once. A copy that cannot be
    /// made leaves the query reading the view (slower, same rows).
    private func snapshotViews(readBy sql: String) {
        guard let database = (store as? SQLiteStore)?.database else { return }
        for (view, key) in Self.snapshotViews where !snapshots.contains(view) && Self.names(view, in: sql) {
            do {
                // A copy an earlier runner could not drop is replaced: this runner's copy is of the store now.
                try database.execute("DROP TABLE IF EXISTS temp.\(view)")
                try database.execute("CREATE TEMP TABLE \(view) AS SELECT * FROM main.\(view)")
                snapshots.append(view)
                try database.execute("CREATE INDEX temp.\(view)_\(key) ON \(view) (\(key))")
            } catch {
                continue
            }
        }
    }

    /// Whether `sql` names `view` as a whole word (any case).
    static func names(_ view: String, in sql: String) -> Bool {
        let text = Array(sql.lowercased().utf8)
        let word = Array(view.utf8)
        func isWordByte(_ b: UInt8) -> Bool {
            (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x5F || (b >= 0x41 && b <= 0x5A)
        }
        guard text.count >= word.count else { return false }
        var i = 0
        while i + word.count <= text.count {
            if text[i..<(i + word.count)].elementsEqual(word),
                i == 0 || !isWordByte(text[i - 1]),
                i + word.count == text.count || !isWordByte(text[i + word.count])
            {
                return true
            }
            i += 1
        }
        return false
    }
}
