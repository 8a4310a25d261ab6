import Foundation

/// Loads a rules folder on a thread of its own, started before the ingest, so that parsing the rule files
/// (YAML, a fixed cost of every run) overlaps the ingest instead of following it. A run reads its rules as
/// they were when it started.
final class RuleSetPrefetch: @unchecked Sendable {
    typealias Loaded = (rules: [Rule], errors: [RuleLoadError])

    private let condition = NSCondition()
    private var loaded: Loaded?

    /// Starts loading `folder`; the inline tests are skipped (a run needs only the queries).
    init(folder: URL) {
        let thread = Thread { [self] in
            let result = RuleSet.load(from: folder, includingTests: false)
            condition.lock()
            loaded = result
            condition.broadcast()
            condition.unlock()
        }
        thread.start()
    }

    /// The rules and load errors, waiting until the load has finished.
    func result() -> Loaded {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let loaded { return loaded }
            condition.wait()
        }
    }
}
