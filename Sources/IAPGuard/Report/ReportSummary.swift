import Foundation

/// `summary.json`: the run's numbers for machines. Schema documented in `docs/reports.md`; keys are written
/// sorted, two-space indented, so equal inputs give equal bytes. Bump `schemaVersion` on any incompatible
/// change; adding keys is compatible.
struct ReportSummary: Encodable {
    /// 2: a pipeline run's `sources[]` say `stored_records` and `stored_quarantined` (what the store holds) and no
    /// longer carry `inserted`, `updated` and `unchanged`, which were always 0 here; `records` and `errors` keep
    /// their schema-1 values (the same stored counts).
    static let schemaVersion = 2

    struct Run: Encodable {
        var runID: Int64
        var windowSince: String?
        var windowUntil: String?
        var startedAt: String
        var finishedAt: String
        var toolVersion: String
        var configHash: String
        var referenceCurrency: String
        var userIDsPseudonymized: Bool
        enum CodingKeys: String, CodingKey {
            case runID = "run_id"
            case windowSince = "window_since"
            case windowUntil = "window_until"
            case startedAt = "started_at"
            case finishedAt = "finished_at"
            case toolVersion = "tool_version"
            case configHash = "config_hash"
            case referenceCurrency = "reference_currency"
            case userIDsPseudonymized = "user_ids_pseudonymized"
        }
    }

    /// A source's counts: this run's reads (``ReportInput/sourcesAsStored`` unset), or what the store holds
    /// (set: the pipeline's reports), under names that cannot be taken for the other.
    struct Source: Encodable {
        var name, kind: String
        var records, inserted, updated, unchanged, errors: Int?
        var storedRecords, storedQuarantined: Int?
        var watermark: String?
        enum CodingKeys: String, CodingKey {
            case name, kind, records, inserted, updated, unchanged, errors, watermark
            case storedRecords = "stored_records"
            case storedQuarantined = "stored_quarantined"
        }
    }

    struct Totals: Encodable {
        var byLevel: [String: Int]
        var active, new, recurring, inconclusive, suppressed, resolved: Int
        var moneyAtRisk: String
        var moneyAtRiskMilli: Int64
        enum CodingKeys: String, CodingKey {
            case byLevel = "by_level"
            case active, new, recurring, inconclusive, suppressed, resolved
            case moneyAtRisk = "money_at_risk"
            case moneyAtRiskMilli = "money_at_risk_milli"
        }
    }

    struct Change: Encodable {
        var previousRunID: Int64
        var byLevel: [String: Int]
        var active: Int
        var moneyAtRiskMilli: Int64
        enum CodingKeys: String, CodingKey {
            case previousRunID = "previous_run_id"
            case byLevel = "by_level"
            case active
            case moneyAtRiskMilli = "money_at_risk_milli"
        }
    }

    struct Rule: Encodable {
        var id, title: String
        var version: String?
        var level: String?
        var status: String?
        var experimental: Bool
        var evaluated: Int?
        var error: String?
        var active, new, inconclusive, suppressed, resolved: Int
        var byLevel: [String: Int]
        var moneyAtRisk: String
        enum CodingKeys: String, CodingKey {
            case id, title, version, level, status, experimental, evaluated, error, active, new, inconclusive
            case suppressed, resolved
            case byLevel = "by_level"
            case moneyAtRisk = "money_at_risk"
        }
    }

    struct Quarantine: Encodable {
        var source, reason: String
        var count: Int
        /// The first records' `file:line` (at most three).
        var locations: [String]?
    }

    /// Stored notifications that failed verification, by source and reason.
    struct FailedNotifications: Encodable {
        var source, reason: String
        var count: Int
    }

    struct Storefront: Encodable {
        var storefront: String?
        var moneyAtRisk: String
        enum CodingKeys: String, CodingKey {
            case storefront
            case moneyAtRisk = "money_at_risk"
        }
    }

    var schemaVersion = ReportSummary.schemaVersion
    var run: Run
    var sources: [Source]
    var totals: Totals
    var changeSincePrevious: Change?
    var rules: [Rule]
    var quarantine: [Quarantine]
    /// Absent when no stored notification failed verification.
    var failedNotifications: [FailedNotifications]?
    var moneyAtRiskByStorefront: [Storefront]
    var files: [String]
    /// Present only when some records could not be checked (kept out of the file otherwise).
    var coverage: [Coverage]?

    struct Coverage: Encodable {
        var ruleID: String
        var unchecked: Int
        var reason: String
        var line: String
        var topSources: [Quarantine]
        enum CodingKeys: String, CodingKey {
            case ruleID = "rule_id"
            case unchecked, reason, line
            case topSources = "top_sources"
        }
    }

    var cases: Cases

    /// Cases of this report: by status, and those waiting for an analyst (`open`, `investigating`) by level.
    struct Cases: Encodable {
        var total: Int
        var byStatus: [String: Int]
        var openByLevel: [String: Int]
        enum CodingKeys: String, CodingKey {
            case total
            case byStatus = "by_status"
            case openByLevel = "open_by_level"
        }
    }

    /// The run's source errors and warnings (absent when there are none).
    var sourceErrors: [String]?
    var sourceWarnings: [String]?

    enum CodingKeys: String, CodingKey {
        case schemaVersion = "schema_version"
        case sourceErrors = "source_errors"
        case sourceWarnings = "source_warnings"
        case run, sources, totals
        case changeSincePrevious = "change_since_previous"
        case rules, quarantine
        case failedNotifications = "failed_notifications"
        case moneyAtRiskByStorefront = "money_at_risk_by_storefront"
        case files, coverage, cases
    }

    init(_ model: ReportModel) {
        let input = model.input
        sourceErrors = input.sourceErrors
        sourceWarnings = input.sourceWarnings
        run = Run(
            runID: input.runID, windowSince: input.windowSince.map { ReportFormat.isoTime(millis: $0) },
            windowUntil: input.windowUntil.map { ReportFormat.isoTime(millis: $0) },
            startedAt: ReportFormat.isoTime(millis: input.startedAt),
            finishedAt: ReportFormat.isoTime(millis: input.finishedAt), toolVersion: input.toolVersion,
            configHash: input.configHash, referenceCurrency: input.referenceCurrency,
            userIDsPseudonymized: model.pseudonymized)
        let stored = input.sourcesAsStored == true
        sources = input.sources.map {
            stored
                // `records` and `errors` meant the same in schema 1 and stay for its readers.
                ? Source(
                    name: $0.name, kind: $0.kind, records: $0.records, errors: $0.errors, storedRecords: $0.records,
                    storedQuarantined: $0.errors, watermark: $0.watermark)
                : Source(
                    name: $0.name, kind: $0.kind, records: $0.records, inserted: $0.inserted, updated: $0.updated,
                    unchanged: $0.unchanged, errors: $0.errors, watermark: $0.watermark)
        }
        let active = model.countsByLevel.values.reduce(0, +)
        totals = Totals(
            byLevel: Dictionary(uniqueKeysWithValues: model.countsByLevel.map { ($0.key.rawValue, $0.value) }),
            active: active, new: model.newCount, recurring: model.recurringCount,
            inconclusive: model.inconclusiveCount, suppressed: model.suppressedCount, resolved: model.resolvedCount,
            moneyAtRisk: ReportFormat.decimal(milliunits: model.moneyAtRisk), moneyAtRiskMilli: model.moneyAtRisk)
        if let previous = model.previous {
            var change: [String: Int] = [:]
            for level in Finding.Level.allCases {
                change[level.rawValue] = (model.countsByLevel[level] ?? 0) - previous.count(level)
            }
            changeSincePrevious = Change(
                previousRunID: previous.runID, byLevel: change, active: active - previous.total,
                moneyAtRiskMilli: model.moneyAtRisk - previous.moneyAtRisk)
        }
        rules = model.sections.map { section in
            var byLevel: [String: Int] = [:]
            for level in Finding.Level.allCases { byLevel[level.rawValue] = 0 }
            for f in section.active { byLevel[f.level.rawValue, default: 0] += 1 }
            return Rule(
                id: section.id, title: section.title, version: section.description?.version,
                level: section.description?.level.rawValue, status: section.description?.status,
                experimental: section.isExperimental, evaluated: section.count?.evaluated, error: section.count?.error,
                active: section.active.count, new: section.newCount, inconclusive: section.inconclusive.count,
                suppressed: section.suppressed.count, resolved: section.resolved.count, byLevel: byLevel,
                moneyAtRisk: ReportFormat.decimal(milliunits: section.moneyAtRisk))
        }
        quarantine = input.quarantine
            .sorted { ($0.sourceName, $0.reason) < ($1.sourceName, $1.reason) }
            .map { Quarantine(source: $0.sourceName, reason: $0.reason, count: $0.count, locations: $0.locations) }
        failedNotifications = input.failedNotifications?.map {
            FailedNotifications(source: $0.sourceName, reason: $0.reason, count: $0.count)
        }
        moneyAtRiskByStorefront = model.moneyByStorefront.map {
            Storefront(storefront: $0.storefront, moneyAtRisk: ReportFormat.decimal(milliunits: $0.amount))
        }
        files = ReportWriter.runFiles
        let lines = (input.coverage ?? []).map { item in
            Coverage(
                ruleID: item.ruleID, unchecked: item.unchecked, reason: item.reason, line: item.line,
                topSources: item.topSources.map { Quarantine(source: $0.source, reason: item.reason, count: $0.count) })
        }
        coverage = lines.isEmpty ? nil : lines
        var byStatus: [String: Int] = [:]
        for status in CaseStatus.allCases { byStatus[status.rawValue] = 0 }
        for incident in model.cases { byStatus[incident.status.rawValue, default: 0] += 1 }
        cases = Cases(
            total: model.cases.count, byStatus: byStatus,
            openByLevel: Dictionary(
                uniqueKeysWithValues: Finding.Level.allCases.map { ($0.rawValue, model.openCasesByLevel[$0] ?? 0) }))
    }

    /// The JSON bytes (sorted keys, pretty-printed, trailing newline).
    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        var data = try encoder.encode(self)
        data.append(0x0A)
        return data
    }
}
