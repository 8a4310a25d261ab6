/// Groups active findings into incidents: findings that share a record (see ``CaseMember/linkKeys``) are
/// one incident, transitively (union-find over the records). Pure and deterministic: the same findings give
/// the same groups, in the same order, whatever order they come in.
public enum CaseLinker {
    /// One incident: its findings and the record its case id derives from.
    public struct Group: Sendable, Hashable {
        /// Indexes into the members passed to ``group(_:)``, ascending.
        public var members: [Int]
        /// The group's smallest record key (see ``keyOrder(_:_:)``): transactions first, then originals,
        /// orders, credits, tokens, accounts.
        public var anchorKey: String
        /// The earliest transaction of the group (shortest, then smallest id), if any.
        public var anchorTransactionID: String?
    }

    /// The incidents among `members`, sorted by anchor key.
    public static func group(_ members: [CaseMember]) -> [Group] {
        var parent = Array(members.indices)
        func find(_ i: Int) -> Int {
            var root = i
            while parent[root] != root { root = parent[root] }
            var node = i
            while parent[node] != root {
                let next = parent[node]
                parent[node] = root
                node = next
            }
            return root
        }
        var owner: [String: Int] = [:]
        var keysOf: [[String]] = []
        keysOf.reserveCapacity(members.count)
        for (index, member) in members.enumerated() {
            let keys = member.linkKeys
            keysOf.append(keys)
            for key in keys {
                if let other = owner[key] {
                    let a = find(index)
                    let b = find(other)
                    if a != b { parent[max(a, b)] = min(a, b) }
                } else {
                    owner[key] = index
                }
            }
        }
        var byRoot: [Int: [Int]] = [:]
        for index in members.indices { byRoot[find(index), default: []].append(index) }
        var groups: [Group] = []
        groups.reserveCapacity(byRoot.count)
        for indexes in byRoot.values {
            var anchor: String?
            var transaction: String?
            for index in indexes {
                for key in keysOf[index] {
                    if anchor.map({ keyOrder(key, $0) }) ?? true { anchor = key }
                    if key.hasPrefix("t:") {
                        let id = String(key.dropFirst(2))
                        if transaction.map({ idOrder(id, $0) }) ?? true { transaction = id }
                    }
                }
            }
            // A finding with no record at all still makes a case of its own.
            let fallback = "f:" + (indexes.map { members[$0].findingID }.min() ?? "")
            groups.append(
                Group(members: indexes.sorted(), anchorKey: anchor ?? fallback, anchorTransactionID: transaction))
        }
        return groups.sorted { $0.anchorKey < $1.anchorKey }
    }

    /// Record kinds in anchor order: a transaction is the best anchor, an account the last resort.
    static let kindRank: [Character: Int] = [
        "t": 0, "o": 1, "r": 2, "c": 3, "k": 4, "a": 5, "u": 6, "q": 7, "f": 8,
    ]

    /// Whether record key `a` anchors before `b`: by kind, then id (shorter first, so numeric ids compare as
    /// numbers and an earlier Apple transaction anchors before a later one).
    static func keyOrder(_ a: String, _ b: String) -> Bool {
        let ra = a.first.flatMap { kindRank[$0] } ?? 9
        let rb = b.first.flatMap { kindRank[$0] } ?? 9
        if ra != rb { return ra < rb }
        return idOrder(String(a.dropFirst(2)), String(b.dropFirst(2)))
    }

    /// Shorter first, then by code points.
    static func idOrder(_ a: String, _ b: String) -> Bool {
        let la = a.utf8.count
        let lb = b.utf8.count
        return la != lb ? la < lb : a < b
    }

    /// The case id derived from an anchor record (`C-` + 12 hex digits of its SHA-256); `attempt` > 0 gives
    /// the alternatives used when that id already belongs to another incident.
    public static func caseID(anchorKey: String, attempt: Int = 0) -> String {
        let material = attempt == 0 ? anchorKey : anchorKey + "#" + String(attempt)
        return "C-" + Hashing.sha256Hex(material).prefix(12)
    }
}
