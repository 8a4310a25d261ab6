import Foundation

extension RuleSet {
    /// The store's private tables (every table of the schema; rules read the documented views only), from a
    /// migrated in-memory store.
    static let schemaTables: Set<String> = {
        guard let store = try? SQLiteStore(path: ":memory:"), (try? store.migrate()) != nil,
            let tables = try? SQLAccessAuditor.tableNames(of: store.database)
        else { return [] }
        return tables
    }()

    /// Splits `rules` into those that read only the documented views and errors for the others, as
    /// `rules validate` reports them: a run never evaluates a rule that names a private table (its meaning
    /// would change with the store's layout, and the PostgreSQL store has no such tables).
    public static func readingViewsOnly(_ rules: [Rule]) -> (rules: [Rule], errors: [RuleLoadError]) {
        var kept: [Rule] = []
        var errors: [RuleLoadError] = []
        for rule in rules {
            let texts = [rule.query] + rule.evidenceQueries.map(\.sql) + (rule.incremental?.timeQueries ?? [])
            let tables = texts.flatMap { SQLAccessAuditor.privateTables(in: $0, tables: schemaTables) }
            guard let table = tables.first else {
                kept.append(rule)
                continue
            }
            errors.append(
                RuleLoadError(
                    file: rule.file, line: rule.line(of: "query"),
                    message: "\(rule.id) \(SQLAccessAuditor.privateTableProblem(table)); not run"))
        }
        return (kept, errors)
    }
}
