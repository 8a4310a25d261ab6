import Yams

extension Node {
    /// The line of the value a config key path names (`sources[2].format`, `apps[0].products[1].units`,
    /// `rule_params.IAP-014.grace_hours`), or of the deepest part of the path that exists (a missing key
    /// points at its mapping). Mapping keys may contain dots (bundle ids): the longest key that matches
    /// the rest of the path wins. `nil` only when the path does not even start in this tree.
    func line(ofKeyPath path: String) -> Int? {
        var node = self
        var rest = Substring(path)
        var deepest = mark?.line
        while !rest.isEmpty {
            if rest.hasPrefix(".") { rest = rest.dropFirst() }
            switch node {
            case .sequence(let sequence):
                guard rest.hasPrefix("["), let close = rest.firstIndex(of: "]"),
                    let index = Int(rest[rest.index(after: rest.startIndex)..<close]), sequence.indices.contains(index)
                else { return deepest }
                node = sequence[index]
                rest = rest[rest.index(after: close)...]
            case .mapping(let mapping):
                var best: (key: String, value: Node, keyNode: Node)?
                for (keyNode, value) in mapping {
                    guard let key = keyNode.string, rest.hasPrefix(key) else { continue }
                    let after = rest.dropFirst(key.count)
                    guard after.isEmpty || after.hasPrefix(".") || after.hasPrefix("[") else { continue }
                    if key.count > (best?.key.count ?? -1) { best = (key, value, keyNode) }
                }
                guard let best else { return deepest }
                rest = rest.dropFirst(best.key.count)
                // A scalar or empty value sits on its key's line; a block value starts on the next one.
                deepest = best.keyNode.mark?.line ?? deepest
                node = best.value
                if rest.isEmpty { return deepest }
                continue
            default:
                return deepest
            }
            deepest = node.mark?.line ?? deepest
        }
        return deepest
    }
}

extension Config {
    /// The line ``ConfigError`` reports for `keyPath` in config `text` (see `Node.line(ofKeyPath:)`).
    static func line(ofKeyPath keyPath: String, in text: String) -> Int? {
        (try? Yams.compose(yaml: text))?.line(ofKeyPath: keyPath)
    }
}
