import Yams

extension Node {
    /// Why a composed YAML tree cannot safely be turned into Swift values (Yams' `Node.any`).
    enum ConstructionProblem: Equatable {
        /// More than the limit of values once aliases are expanded ("billion laughs").
        case tooLarge
        /// A mapping key that is a list or a mapping (`? [a]: b`): Yams' constructor traps on it.
        case complexKey(line: Int)
    }

    /// The first problem found, or `nil`. Stops counting at `limit`, so it costs at most `limit` steps
    /// whatever the expansion would be.
    func constructionProblem(limit: Int) -> ConstructionProblem? {
        var remaining = limit
        func visit(_ node: Node) -> ConstructionProblem? {
            remaining -= 1
            guard remaining >= 0 else { return .tooLarge }
            switch node {
            case .scalar, .alias:
                return nil
            case .mapping(let mapping):
                for (key, value) in mapping {
                    guard case .scalar = key else { return .complexKey(line: key.mark?.line ?? 1) }
                    if let problem = visit(key) ?? visit(value) { return problem }
                }
                return nil
            case .sequence(let sequence):
                for item in sequence {
                    if let problem = visit(item) { return problem }
                }
                return nil
            }
        }
        return visit(self)
    }
}
