import Yams

extension Node {
    /// Whether this node and everything under it (aliases expanded) is more than `limit` values. Stops
    /// counting at the limit, so it costs at most `limit` steps whatever the expansion would be.
    func exceedsSize(_ limit: Int) -> Bool {
        var remaining = limit
        func visit(_ node: Node) -> Bool {
            remaining -= 1
            guard remaining >= 0 else { return false }
            switch node {
            case .scalar, .alias:
                return true
            case .mapping(let mapping):
                for (key, value) in mapping {
                    guard visit(key), visit(value) else { return false }
                }
                return true
            case .sequence(let sequence):
                for item in sequence {
                    guard visit(item) else { return false }
                }
                return true
            }
        }
        return !visit(self)
    }
}
