/// Ids in first-seen order without duplicates.
struct OrderedIDs {
    private(set) var values: [String] = []
    private var seen = Set<String>()

    init(_ ids: [String] = []) { add(ids) }

    mutating func add(_ ids: [String]) {
        for id in ids where seen.insert(id).inserted { values.append(id) }
    }

    func contains(_ id: String) -> Bool { seen.contains(id) }
    var count: Int { values.count }
}
