import Foundation

/// Command-line options shared by the stages: `iapguard-bench STAGE [--size 100k|1M|10M] [--data DIR] …`.
struct BenchOptions {
    var stage: String
    /// Target number of Apple purchases in the world.
    var size: Int = 100_000
    var sizeLabel: String = "100k"
    /// Folder of the world, the stores and the scratch files for this size.
    var dataDirectory: URL?
    /// Fraction of ordinary StoreKit 2 purchases signed (`--sign-sample`); by size when not given.
    var signSample: Double?
    /// Seconds per figure in the verify stage.
    var seconds: Double = 3
    /// At most this many lines per file in the parse stage (a prefix copy), 0 = all.
    var parseLines: Int?
    var python = "python3"
    /// Longest a single rule query may run in the rules stage before it is interrupted and reported.
    var ruleTimeLimit: Double = 300
    /// Rules the run stage leaves out and the rules stage only times the query of (`--skip-rules IAP-009,…`),
    /// e.g. ones that do not finish at a size; every query runs under `--rule-time-limit`.
    var skipRules: Set<String> = []
    /// The incremental stage truncates the world's files and appends their tails back instead of copying 99 %
    /// of them (`--in-place`; for a 10M world on a disk without 17 GB to spare).
    var inPlace = false
    /// The incremental stage reads each source from a folder and adds the day as a new file
    /// (`--daily-files`) instead of appending it to one growing file.
    var dailyFiles = false
    /// How the incremental stage picks the day (`--split last-day|tail`): the records of the world's last day
    /// (the default), or the last 1 % of each file's lines, which are 1 % of the users with their whole
    /// history (always so with `--in-place`, where a file can only be truncated).
    var splitByTime = true
    /// The incremental stage stops after the incremental run (`--no-rescan`): no DuckDB re-scan and no full
    /// re-evaluation (at 10M those two take about an hour; run them once, not each time the daily run is
    /// re-measured).
    var noRescan = false
    /// The rules stage reads the store once before it times the queries, and the incremental stage before the
    /// daily run (`--warm-store`), so the page cache holds it as after an ingest; both stages print how much of
    /// the store was cached either way.
    var warmStore = false
    /// The incremental stage runs the daily run this many times (`--daily-repeats N`, default 1), each on the
    /// store as the full run left it (restored from a copy), and takes the median run for its ratios: on a
    /// shared machine one daily run moves by ±15 %.
    var dailyRepeats = 1
    /// The `scopes` stage: the store to read (`--store`), and whether each rule reads the shared scope
    /// itself (`--separate`).
    var storePath: String?
    var separateScopes = false

    static let usage = """
        usage: iapguard-bench STAGE [--size 100k|1M|10M|N] [--data DIR] [--sign-sample F] [--seconds S]
                                    [--parse-lines N] [--python PYTHON] [--skip-rules ID,ID]
                                    [--rule-time-limit S] [--in-place] [--daily-files] [--no-rescan]
                                    [--split last-day|tail] [--warm-store] [--daily-repeats N]
        stages: all (generate, then parse, verify, ingest, rules, reports, run, incremental, each in its own
                process); any of those alone; rerun; scopes --store S [--separate] (memory of a plan's rule
                scopes); store (SQLite beside PostgreSQL: IAPGUARD_BENCH_PG_URL, IAPGUARD_BENCH_USERS)
        """

    init(arguments: [String]) throws {
        guard let first = arguments.first else { throw BenchError(Self.usage) }
        stage = first
        var index = 1
        func value() throws -> String {
            guard index + 1 < arguments.count else { throw BenchError("\(arguments[index]) needs a value") }
            index += 1
            return arguments[index]
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--size":
                let text = try value()
                guard let parsed = Self.parseSize(text) else { throw BenchError("bad --size \(text)") }
                size = parsed
                sizeLabel = text
            case "--data": dataDirectory = URL(fileURLWithPath: try value())
            case "--sign-sample": signSample = Double(try value())
            case "--seconds": seconds = Double(try value()) ?? 3
            case "--parse-lines": parseLines = Int(try value())
            case "--python": python = try value()
            case "--rule-time-limit": ruleTimeLimit = Double(try value()) ?? 300
            case "--skip-rules": skipRules = Set(try value().split(separator: ",").map(String.init))
            case "--in-place": inPlace = true
            case "--daily-files": dailyFiles = true
            case "--split":
                switch try value() {
                case "last-day": splitByTime = true
                case "tail": splitByTime = false
                case let other: throw BenchError("bad --split \(other): last-day or tail")
                }
            case "--no-rescan": noRescan = true
            case "--warm-store": warmStore = true
            case "--daily-repeats":
                let text = try value()
                guard let count = Int(text), count >= 1 else {
                    throw BenchError("bad --daily-repeats \(text): 1 or more")
                }
                dailyRepeats = count
            case "--store": storePath = try value()
            case "--separate": separateScopes = true
            default: throw BenchError("unknown option \(arguments[index])\n\(Self.usage)")
            }
            index += 1
        }
    }

    static func parseSize(_ text: String) -> Int? {
        let lower = text.lowercased()
        if lower.hasSuffix("k"), let n = Double(lower.dropLast()) { return Int(n * 1_000) }
        if lower.hasSuffix("m"), let n = Double(lower.dropLast()) { return Int(n * 1_000_000) }
        return Int(lower)
    }

    /// `--data`, or `/work/bench-data/<size>` (never inside the repository: worlds are large).
    var directory: URL {
        dataDirectory ?? URL(fileURLWithPath: "/work/bench-data/\(sizeLabel)")
    }

    var worldDirectory: URL { directory.appendingPathComponent("world") }

    /// Everything signed up to 100k purchases, 10 % up to 1M, 1 % beyond (signing is the generator's cost).
    var effectiveSignSample: Double {
        if let signSample { return signSample }
        if size <= 100_000 { return 1 }
        if size <= 1_000_000 { return 0.1 }
        return 0.01
    }

    /// The parse stage reads every line up to 1M purchases, a 1M-line prefix of each file beyond.
    var effectiveParseLines: Int {
        if let parseLines { return parseLines }
        return size > 1_000_000 ? 1_000_000 : 0
    }

    /// The arguments that select the same size and data for a child stage.
    var childArguments: [String] {
        var result = ["--size", sizeLabel, "--data", directory.path, "--seconds", String(seconds), "--python", python]
        if let signSample { result += ["--sign-sample", String(signSample)] }
        if let parseLines { result += ["--parse-lines", String(parseLines)] }
        result += ["--rule-time-limit", String(ruleTimeLimit)]
        if !skipRules.isEmpty { result += ["--skip-rules", skipRules.sorted().joined(separator: ",")] }
        if inPlace { result.append("--in-place") }
        if dailyFiles { result.append("--daily-files") }
        if !splitByTime { result += ["--split", "tail"] }
        if noRescan { result.append("--no-rescan") }
        if warmStore { result.append("--warm-store") }
        if dailyRepeats > 1 { result += ["--daily-repeats", String(dailyRepeats)] }
        return result
    }

    /// The repository (parent of `Benchmarks/`).
    static let repository: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static var scriptsDirectory: URL {
        repository.appendingPathComponent("Benchmarks/Scripts")
    }
}
