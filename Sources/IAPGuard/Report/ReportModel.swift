import Foundation

/// The numbers and orderings every output shares, computed once from a `ReportInput` (user ids already
/// pseudonymised when asked). Pure: no clock, no disk.
struct ReportModel: Sendable {
    /// How a finding is shown: active hits first, then inconclusive, suppressed and resolved ones.
    enum Bucket: Int, Sendable, CaseIterable {
        case active, inconclusive, suppressed, resolved

        init(_ finding: Finding) {
            if finding.status == .suppressed || finding.suppression != nil {
                self = .suppressed
            } else if finding.status == .resolved {
                self = .resolved
            } else if finding.outcome == .inconclusive {
                self = .inconclusive
            } else {
                self = .active
            }
        }
    }

    /// One rule's part of the report. The buckets are slices of the model's ``findings`` (which holds them
    /// in this order), so the findings are held once however many views of them the outputs need.
    struct RuleSection: Sendable {
        var id: String
        var description: ReportInput.RuleDescription?
        var count: ReportInput.RuleCount?
        var active: ArraySlice<Finding> = []
        var inconclusive: ArraySlice<Finding> = []
        var suppressed: ArraySlice<Finding> = []
        var resolved: ArraySlice<Finding> = []
        var moneyAtRisk: Int64 = 0

        var title: String {
            description?.title ?? active.first?.ruleTitle ?? inconclusive.first?.ruleTitle
                ?? suppressed.first?.ruleTitle ?? resolved.first?.ruleTitle ?? id
        }
        var isExperimental: Bool { description?.isExperimental ?? false }
        var newCount: Int { active.filter { $0.status == .new }.count }
    }

    /// The input, except its findings: they are in ``findings`` (sorted), not held twice.
    let input: ReportInput
    let pseudonymized: Bool
    /// Every finding, in output order: by rule id, bucket, level (high first), money at risk, finding id.
    let findings: [Finding]
    let sections: [RuleSection]
    let countsByLevel: [Finding.Level: Int]
    let newCount: Int
    let recurringCount: Int
    let inconclusiveCount: Int
    let suppressedCount: Int
    let resolvedCount: Int
    /// Active hits' money at risk, each transaction counted once (its largest amount), reference milliunits.
    let moneyAtRisk: Int64
    /// Money at risk per storefront (unknown storefront: `nil`), largest first.
    let moneyByStorefront: [(storefront: String?, amount: Int64)]
    let priceRatios: [Double]
    /// The latest earlier run, if any.
    let previous: RunHistoryEntry?
    /// The cases (user ids pseudonymised when asked), in queue order: open states first, then level and money.
    let cases: [IncidentCase]
    /// Cases waiting for an analyst (`open` or `investigating`) by level.
    let openCasesByLevel: [Finding.Level: Int]
    /// This run as a history entry.
    let current: RunHistoryEntry
    /// Recent runs, oldest first, ending with this one.
    let trend: [RunHistoryEntry]

    /// `input` is consumed: its findings are sorted in place into output order and held by the model only.
    init(input: consuming ReportInput, options: ReportOptions, fileHistory: [RunHistoryEntry]) {
        let pseudonymizer = UserIDPseudonymizer(key: options.pseudonymizeUserIDs)
        var cases = input.cases.sorted(by: IncidentCase.queueOrder)
        input.cases = []
        if pseudonymizer.isActive {
            let known = Self.userIDs(in: input.findings)
            input.findings = input.findings.map { Self.pseudonymize($0, with: pseudonymizer, knownUserIDs: known) }
            cases = cases.map { Self.pseudonymize($0, with: pseudonymizer, knownUserIDs: known) }
        }
        self.pseudonymized = pseudonymizer.isActive
        var openCases: [Finding.Level: Int] = [:]
        for incident in cases where incident.status.isOpen && !incident.findingIDs.isEmpty {
            openCases[incident.level, default: 0] += 1
        }
        self.cases = cases
        self.openCasesByLevel = openCases

        // Sections: every described rule, plus any rule id that only appears in findings or counts.
        var byID: [String: RuleSection] = [:]
        for rule in input.rules { byID[rule.id, default: RuleSection(id: rule.id)].description = rule }
        for count in input.ruleCounts { byID[count.ruleID, default: RuleSection(id: count.ruleID)].count = count }
        // The findings sorted in place into output order (rule id, bucket, hit order); each rule's buckets
        // are then slices of that one array. The input was handed over, so nothing here copies the findings:
        // at 100k+ findings, copies of the whole set were most of the report's memory.
        input.findings.sort { a, b in
            if a.ruleID != b.ruleID { return a.ruleID < b.ruleID }
            let bucketA = Bucket(a).rawValue
            let bucketB = Bucket(b).rawValue
            if bucketA != bucketB { return bucketA < bucketB }
            return Self.hitOrder(a, b)
        }
        let ordered = input.findings
        input.findings = []
        var ranges: [String: [Range<Int>]] = [:]
        var start = 0
        while start < ordered.count {
            let ruleID = ordered[start].ruleID
            let bucket = Bucket(ordered[start]).rawValue
            var end = start + 1
            while end < ordered.count, ordered[end].ruleID == ruleID, Bucket(ordered[end]).rawValue == bucket {
                end += 1
            }
            if byID[ruleID] == nil { byID[ruleID] = RuleSection(id: ruleID) }
            ranges[ruleID, default: Array(repeating: 0..<0, count: Bucket.allCases.count)][bucket] = start..<end
            start = end
        }
        var sections = byID.values.sorted { $0.id < $1.id }
        for index in sections.indices {
            let bucketRanges = ranges[sections[index].id] ?? Array(repeating: 0..<0, count: Bucket.allCases.count)
            sections[index].active = ordered[bucketRanges[Bucket.active.rawValue]]
            sections[index].inconclusive = ordered[bucketRanges[Bucket.inconclusive.rawValue]]
            sections[index].suppressed = ordered[bucketRanges[Bucket.suppressed.rawValue]]
            sections[index].resolved = ordered[bucketRanges[Bucket.resolved.rawValue]]
            sections[index].moneyAtRisk = Self.dedupedMoney(sections[index].active).values.reduce(0) {
                Money.saturatingSum($0, $1.amount)
            }
        }
        self.sections = sections
        self.findings = ordered

        let active = sections.lazy.flatMap(\.active)
        var levels: [Finding.Level: Int] = [:]
        for level in Finding.Level.allCases { levels[level] = 0 }
        var activeCount = 0
        var newCount = 0
        for finding in active {
            levels[finding.level, default: 0] += 1
            activeCount += 1
            if finding.status == .new { newCount += 1 }
        }
        self.countsByLevel = levels
        self.newCount = newCount
        self.recurringCount = activeCount - newCount
        self.inconclusiveCount = sections.reduce(0) { $0 + $1.inconclusive.count }
        self.suppressedCount = sections.reduce(0) { $0 + $1.suppressed.count }
        self.resolvedCount = sections.reduce(0) { $0 + $1.resolved.count }

        let money = Self.dedupedMoney(active)
        self.moneyAtRisk = money.values.reduce(0) { Money.saturatingSum($0, $1.amount) }
        var byStorefront: [String?: Int64] = [:]
        for item in money.values {
            byStorefront[item.storefront] = Money.saturatingSum(byStorefront[item.storefront] ?? 0, item.amount)
        }
        self.moneyByStorefront = byStorefront.map { (storefront: $0.key, amount: $0.value) }
            .filter { $0.amount != 0 }
            .sorted {
                $0.amount != $1.amount
                    ? $0.amount > $1.amount : ($0.storefront ?? "\u{10FFFF}") < ($1.storefront ?? "\u{10FFFF}")
            }

        if let given = input.priceRatios {
            self.priceRatios = given.map(\.ratio).filter(\.isFinite)
        } else {
            self.priceRatios = ordered.filter { $0.ruleID == "IAP-008" && $0.outcome == .hit }
                .compactMap { $0.observed.flatMap { Double($0.trimmingCharacters(in: .whitespaces)) } }
                .filter(\.isFinite)
        }

        var hitsByRule: [String: Int] = [:]
        for section in sections where !section.active.isEmpty { hitsByRule[section.id] = section.active.count }
        var current = RunHistoryEntry(
            runID: input.runID, finishedAt: input.finishedAt,
            countsByLevel: Dictionary(uniqueKeysWithValues: levels.map { ($0.key.rawValue, $0.value) }),
            hitsByRule: hitsByRule, moneyAtRisk: moneyAtRisk, referenceCurrency: input.referenceCurrency)
        if !cases.isEmpty {
            current.openCasesByLevel = Dictionary(
                uniqueKeysWithValues: Finding.Level.allCases.map { ($0.rawValue, openCases[$0] ?? 0) })
        }
        self.current = current

        var earlier: [Int64: RunHistoryEntry] = [:]
        for entry in fileHistory where entry.runID < input.runID { earlier[entry.runID] = entry }
        for entry in input.history where entry.runID < input.runID { earlier[entry.runID] = entry }
        let earlierRuns = earlier.values.sorted { $0.runID < $1.runID }
        self.previous = earlierRuns.last
        self.trend = Array(earlierRuns.suffix(options.trendRuns - 1)) + [current]
        self.input = input
    }

    /// Level (highest first), then money at risk (largest first, none last), then finding id.
    static func hitOrder(_ a: Finding, _ b: Finding) -> Bool {
        if a.level != b.level { return a.level > b.level }
        let am = a.amountRef ?? Int64.min
        let bm = b.amountRef ?? Int64.min
        if am != bm { return am > bm }
        if a.findingID != b.findingID { return a.findingID < b.findingID }
        return (a.transactionID ?? "") < (b.transactionID ?? "")
    }

    /// Money at risk keyed by transaction id (or finding id when there is none), the largest amount kept.
    static func dedupedMoney(_ findings: some Sequence<Finding>) -> [String: (amount: Int64, storefront: String?)] {
        var out: [String: (amount: Int64, storefront: String?)] = [:]
        // An informational row is context (a refused purchase, two storefronts), never money at risk.
        for finding in findings where finding.level != .informational {
            guard let amount = finding.amountRef else { continue }
            let key = finding.transactionID.map { "t:" + $0 } ?? "f:" + finding.findingID
            if let existing = out[key], existing.amount >= amount { continue }
            out[key] = (amount, finding.storefront)
        }
        return out
    }

    /// Every user id in the findings (user ids and user-id evidence fields).
    static func userIDs(in findings: [Finding]) -> [String] {
        var ids = Set<String>()
        for finding in findings {
            if let user = finding.userID { ids.insert(user) }
            for row in finding.evidence {
                for field in row.fields where UserIDPseudonymizer.isUserField(field.name) {
                    guard let value = field.value else { continue }
                    for part in value.split(separator: ",") {
                        let trimmed = part.trimmingCharacters(in: .whitespaces)
                        if !trimmed.isEmpty { ids.insert(trimmed) }
                    }
                }
            }
        }
        return ids.sorted()
    }

    static func pseudonymize(_ incident: IncidentCase, with p: UserIDPseudonymizer, knownUserIDs: [String])
        -> IncidentCase
    {
        var c = incident
        c.gainingUserID = incident.gainingUserID.map { p.pseudonym($0) }
        c.losingUserID = incident.losingUserID.map { p.pseudonym($0) }
        c.summary = p.scrub(incident.summary, knownUserIDs: knownUserIDs)
        c.statusNote = incident.statusNote.map { p.scrub($0, knownUserIDs: knownUserIDs) }
        if c.anchorKey.hasPrefix("u:") || c.anchorKey.hasPrefix("q:") { c.anchorKey = "u:" + p.pseudonym(c.anchorKey) }
        return c
    }

    static func pseudonymize(_ finding: Finding, with p: UserIDPseudonymizer, knownUserIDs: [String]) -> Finding {
        var f = finding
        f.userID = finding.userID.map { p.pseudonym($0) }
        f.summary = p.scrub(finding.summary, knownUserIDs: knownUserIDs)
        f.observed = finding.observed.map { p.scrub($0, knownUserIDs: knownUserIDs) }
        f.threshold = finding.threshold.map { p.scrub($0, knownUserIDs: knownUserIDs) }
        f.inconclusiveReason = finding.inconclusiveReason.map { p.scrub($0, knownUserIDs: knownUserIDs) }
        f.evidence = finding.evidence.map { row in
            EvidenceRow(
                kind: row.kind,
                fields: row.fields.map { field in
                    guard let value = field.value else { return field }
                    if UserIDPseudonymizer.isUserField(field.name) {
                        return EvidenceField(name: field.name, value: p.pseudonymField(value))
                    }
                    return EvidenceField(name: field.name, value: p.scrub(value, knownUserIDs: knownUserIDs))
                })
        }
        return f
    }
}
