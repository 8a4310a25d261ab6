import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes one run's report folder and keeps `reports/index.html` and `reports/history.jsonl` up to date.
///
/// Layout (see `docs/reports.md`):
/// ```
/// reports/
///   index.html          every run in the history, newest first
///   history.jsonl       one RunHistoryEntry per line, one line per run id, sorted by run id
///   <run-id>/report.html, findings.csv, evidence.csv, summary.json, cases.csv
/// ```
/// The run folder is built in a hidden temporary folder next to it and renamed into place, so readers never
/// see a half-written report; an existing folder for the same run id is replaced. The same input (and the
/// same earlier history) always produces the same bytes.
public struct ReportWriter: Sendable {
    /// The files in every run folder.
    public static let runFiles = ["report.html", "findings.csv", "evidence.csv", "summary.json", "cases.csv"]
    /// The history file's name inside the reports folder.
    public static let historyFileName = "history.jsonl"

    public let reportsDirectory: URL
    public let options: ReportOptions

    public init(reportsDirectory: URL, options: ReportOptions = ReportOptions()) {
        self.reportsDirectory = reportsDirectory
        self.options = options
    }

    /// The folder a run's report is (or will be) written to.
    public func runDirectory(_ runID: Int64) -> URL {
        reportsDirectory.appendingPathComponent(String(runID), isDirectory: true)
    }

    /// Writes `reports/<run-id>/`, then updates the history and the index. Returns the run folder.
    ///
    /// The input is consumed: its findings move into the report's model, sorted, so a caller that hands
    /// them over (`write(consume input)`) keeps no second copy of a large run's findings.
    @discardableResult
    public func write(_ input: consuming ReportInput) throws -> URL {
        let fm = FileManager.default
        do {
            try fm.createDirectory(at: reportsDirectory, withIntermediateDirectories: true)
        } catch {
            throw ReportError.cannotWrite(path: reportsDirectory.path, reason: "\(error)")
        }
        let fileHistory = readHistoryLeniently()
        let model = ReportModel(input: consume input, options: options, fileHistory: fileHistory)
        let stored = model.input  // everything but the findings, which the model holds sorted

        let destination = runDirectory(stored.runID)
        let temporary = reportsDirectory.appendingPathComponent(
            ".tmp-\(stored.runID)-\(UUID().uuidString)", isDirectory: true)
        do {
            try fm.createDirectory(at: temporary, withIntermediateDirectories: false)
            // The HTML is rendered on another core while the CSVs are streamed (memory stays bounded by the
            // model and the one page, not by the CSVs).
            let options = options
            let html = BackgroundResult(name: "iapguard-report-html") { [model] in
                Data(HTMLReportRenderer(model: model, options: options).render().utf8)
            }
            try ReportCSV.writeFindings(model, to: temporary.appendingPathComponent("findings.csv"))
            try ReportCSV.writeEvidence(model, to: temporary.appendingPathComponent("evidence.csv"))
            try ReportCSV.writeCases(model, to: temporary.appendingPathComponent("cases.csv"))
            try ReportSummary(model).encoded().write(to: temporary.appendingPathComponent("summary.json"))
            try html.get().write(to: temporary.appendingPathComponent("report.html"))
            try Self.replaceDirectory(at: destination, with: temporary)
        } catch {
            try? fm.removeItem(at: temporary)
            if let reportError = error as? ReportError { throw reportError }
            throw ReportError.cannotWrite(path: destination.path, reason: "\(error)")
        }

        // The file keeps every run it has seen; earlier runs the pipeline passed in fill the gaps (same
        // precedence as the trend: the input wins), and this run's line replaces any earlier line for it.
        var byRun: [Int64: RunHistoryEntry] = [:]
        for entry in fileHistory { byRun[entry.runID] = entry }
        for entry in stored.history where entry.runID < stored.runID { byRun[entry.runID] = entry }
        byRun[stored.runID] = model.current
        let history = byRun.values.sorted { $0.runID < $1.runID }
        try writeAtomically(Self.encodeHistory(history), name: Self.historyFileName)

        let existing = Set(
            history.map(\.runID).filter {
                fm.fileExists(atPath: runDirectory($0).appendingPathComponent("report.html").path)
            })
        let index = HTMLIndexRenderer(history: history, existingReports: existing).render()
        try writeAtomically(Data(index.utf8), name: "index.html")
        return destination
    }

    /// The history file's entries, sorted by run id (empty when there is none yet). Throws on a bad line.
    public func readHistory() throws -> [RunHistoryEntry] {
        let url = reportsDirectory.appendingPathComponent(Self.historyFileName)
        guard let data = try? Data(contentsOf: url) else { return [] }
        var out: [Int64: RunHistoryEntry] = [:]
        let decoder = JSONDecoder()
        for (index, line) in data.split(separator: 0x0A, omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.filter { $0 != 0x0D && $0 != 0x20 }
            if trimmed.isEmpty { continue }
            do {
                let entry = try decoder.decode(RunHistoryEntry.self, from: Data(line))
                out[entry.runID] = entry
            } catch {
                throw ReportError.badHistoryLine(path: url.path, line: index + 1, reason: "\(error)")
            }
        }
        return out.values.sorted { $0.runID < $1.runID }
    }

    /// Like `readHistory`, but a damaged line is skipped (the history is derived data; the run goes on).
    private func readHistoryLeniently() -> [RunHistoryEntry] {
        if let all = try? readHistory() { return all }
        let url = reportsDirectory.appendingPathComponent(Self.historyFileName)
        guard let data = try? Data(contentsOf: url) else { return [] }
        var out: [Int64: RunHistoryEntry] = [:]
        for line in data.split(separator: 0x0A) {
            if let entry = try? JSONDecoder().decode(RunHistoryEntry.self, from: Data(line)) {
                out[entry.runID] = entry
            }
        }
        return out.values.sorted { $0.runID < $1.runID }
    }

    static func encodeHistory(_ entries: [RunHistoryEntry]) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var data = Data()
        for entry in entries {
            data.append(try encoder.encode(entry))
            data.append(0x0A)
        }
        return data
    }

    /// Writes a file in the reports folder through a temporary file and `rename(2)`.
    private func writeAtomically(_ data: Data, name: String) throws {
        let target = reportsDirectory.appendingPathComponent(name)
        let temporary = reportsDirectory.appendingPathComponent(".tmp-\(name)-\(UUID().uuidString)")
        do {
            try data.write(to: temporary)
            guard rename(temporary.path, target.path) == 0 else {
                throw ReportError.cannotWrite(path: target.path, reason: String(cString: strerror(errno)))
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            if let reportError = error as? ReportError { throw reportError }
            throw ReportError.cannotWrite(path: target.path, reason: "\(error)")
        }
    }

    /// Puts `source` (a finished folder) at `destination`. A folder already there is first renamed aside,
    /// then removed once the new one is in place; if the second rename fails the old folder is put back.
    static func replaceDirectory(at destination: URL, with source: URL) throws {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: destination.path, isDirectory: &isDirectory) else {
            guard rename(source.path, destination.path) == 0 else {
                throw ReportError.cannotWrite(path: destination.path, reason: String(cString: strerror(errno)))
            }
            return
        }
        let aside = destination.deletingLastPathComponent()
            .appendingPathComponent(".old-\(destination.lastPathComponent)-\(UUID().uuidString)", isDirectory: true)
        guard rename(destination.path, aside.path) == 0 else {
            throw ReportError.cannotWrite(path: destination.path, reason: String(cString: strerror(errno)))
        }
        guard rename(source.path, destination.path) == 0 else {
            let reason = String(cString: strerror(errno))
            _ = rename(aside.path, destination.path)
            throw ReportError.cannotWrite(path: destination.path, reason: reason)
        }
        try? fm.removeItem(at: aside)
    }
}
