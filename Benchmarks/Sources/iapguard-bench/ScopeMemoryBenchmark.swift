import Foundation
import IAPGuard

/// The memory of an incremental plan's rule scopes, on a store whose last plan left its scope in
/// `incremental_scope` (e.g. the incremental stage's store): every incremental rule's scope loaded and held,
/// either each reading the shared keys itself (`--separate`, as before `d2426b8`) or all sharing one read.
/// Prints the keys and the resident size before and after; run each way in its own process.
enum ScopeMemoryBenchmark {
    static func run(_ options: BenchOptions) throws {
        guard let path = options.storePath else { throw BenchError("scopes needs --store PATH") }
        let separate = options.separateScopes
        let store = try SQLiteStore(path: path)
        let (rules, _) = RuleSet.load(from: BenchOptions.repository.appendingPathComponent("rules"))
        let before = Measure.currentRSS()
        var scopes: [RuleScope] = []
        let (_, seconds) = try Measure.time {
            let shared = separate ? [:] : try RuleScope.loadShared(from: store.connection)
            for rule in rules {
                let scope =
                    separate
                    ? try RuleScope.load(rule: rule, from: store.connection)
                    : try RuleScope.load(rule: rule, shared: shared, from: store.connection)
                if let scope { scopes.append(scope) }
            }
        }
        let keys = scopes.reduce(0) { $0 + $1.count }
        Measure.header("scopes", separate ? "each rule reads the shared scope" : "one shared read")
        Measure.line(
            "scopes", "\(scopes.count) rule scopes, \(keys) keys in all", String(format: "%8.2f s", seconds))
        Measure.line(
            "scopes", "resident size before · after", "\(Measure.mib(before)) · \(Measure.mib(Measure.currentRSS()))")
    }
}
