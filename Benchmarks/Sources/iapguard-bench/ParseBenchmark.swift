import Dispatch
import Foundation
import IAPGuard

/// Parse stage: JSON Lines per kind (Foundation on 1 and 2 threads, iapguard's parsers on both cores, and
/// Python's orjson on the same file), JWS decode, and the orders CSV.
enum ParseBenchmark {
    static func run(_ options: BenchOptions) throws {
        let config = try BenchWorld.config(options)
        Measure.header("parse", "JSON Lines and JWS decode, world \(options.worldDirectory.path)")
        let files = try sampleFiles(options)
        var orjson: [String: Double] = [:]
        do {
            for row in try PythonSideBySide.run(options, ["orjson"] + files.map { $0.url.path }) {
                if let file = row["file"] as? String, let seconds = row["seconds"] as? Double { orjson[file] = seconds }
            }
        } catch {
            print("parse   orjson not measured: \(error)")
        }
        for file in files {
            let bytes = Double(file.bytes)
            let mb = bytes / 1e6
            let name = file.url.lastPathComponent

            let (lines, foundation1) = try Measure.time { try foundationOneThread(file.url) }
            let foundation2 = try foundationTwoThreads(file.url)
            let (_, document1) = try Measure.time { try documentOneThread(file.url) }
            let mapped1 = try mapOneThread(file.url, kind: file.kind)
            let ours = try iapguardParse(file.url, kind: file.kind, config: config)
            let orjsonSeconds = orjson[file.url.path]
            let floor = orjsonSeconds.map { mb / $0 } ?? 0
            func figures(_ seconds: Double) -> String {
                String(format: "%7.1f MB/s  ", mb / seconds) + "\(Measure.rate(Double(lines), seconds)) lines  "
                    + String(format: "%.2f s  ", seconds)
                    + "\(floor > 0 ? Measure.ratio(mb / seconds, floor) : "×?") of orjson"
            }
            print(
                "parse   \(name): \(lines) lines, \(String(format: "%.1f", mb)) MB, \(Int(bytes) / max(1, lines)) B/line"
            )
            if let orjsonSeconds { Measure.line("parse", "  orjson.loads (Python), 1 core", figures(orjsonSeconds)) }
            Measure.line("parse", "  Foundation JSONSerialization, 1 core", figures(foundation1))
            Measure.line("parse", "  Foundation JSONSerialization, 2 threads", figures(foundation2))
            Measure.line("parse", "  iapguard JSONDocument (parse only), 1 core", figures(document1))
            Measure.line("parse", "  iapguard parse+map+hash in memory, 1 core", figures(mapped1))
            Measure.line("parse", "  iapguard parse+map (SourceIngestor, unverified), 2 cores", figures(ours))
        }
        if let orders = try? sampleCSV(options) {
            let bytes = Double((try? FileManager.default.attributesOfItem(atPath: orders.path)[.size] as? Int) ?? 0)
            let seconds = try iapguardParse(orders, kind: .orders, format: .csv, config: config)
            let rows = try lineCount(orders) - 1
            Measure.line(
                "parse", "orders.csv: iapguard CSV parse+map, 1 core",
                String(format: "%7.1f MB/s  %.2f s  ", bytes / 1e6 / seconds, seconds)
                    + "\(Measure.rate(Double(rows), seconds)) rows")
        }
        try jwsDecode(options)
        Measure.line("parse", "peak RSS of this stage", Measure.mib(Measure.peakRSS()))
    }

    struct SampleFile {
        var url: URL
        var kind: Config.Source.Kind
        var bytes: Int
    }

    /// The world's JSON Lines files, or a prefix copy of `--parse-lines` lines of each.
    static func sampleFiles(_ options: BenchOptions) throws -> [SampleFile] {
        let data = options.worldDirectory.appendingPathComponent("data")
        let kinds: [(String, Config.Source.Kind)] = [
            ("receipts.jsonl", .receipts), ("transactions.jsonl", .signedTransactions),
            ("notifications.jsonl", .notifications), ("credits.jsonl", .credits),
        ]
        var result: [SampleFile] = []
        for (name, kind) in kinds {
            let url = try prefix(data.appendingPathComponent(name), options: options)
            let bytes = (try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0
            if bytes > 0 { result.append(SampleFile(url: url, kind: kind, bytes: bytes)) }
        }
        return result
    }

    static func sampleCSV(_ options: BenchOptions) throws -> URL {
        try prefix(options.worldDirectory.appendingPathComponent("data/orders.csv"), options: options)
    }

    /// `file` itself, or a copy of its first `effectiveParseLines` lines under `parse-sample/`.
    static func prefix(_ file: URL, options: BenchOptions) throws -> URL {
        let limit = options.effectiveParseLines
        guard limit > 0 else { return file }
        let folder = options.directory.appendingPathComponent("parse-sample")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let copy = folder.appendingPathComponent(file.lastPathComponent)
        if FileManager.default.fileExists(atPath: copy.path) { return copy }
        FileManager.default.createFile(atPath: copy.path, contents: nil)
        let out = try FileHandle(forWritingTo: copy)
        defer { try? out.close() }
        var buffer: [UInt8] = []
        var count = 0
        struct Done: Error {}
        do {
            try LineReader(url: file).forEachLine { line in
                guard case .text(_, let bytes) = line else { return }
                buffer.append(contentsOf: bytes)
                buffer.append(0x0A)
                count += 1
                if buffer.count > 1 << 20 {
                    try out.write(contentsOf: Data(buffer))
                    buffer.removeAll(keepingCapacity: true)
                }
                if count >= limit { throw Done() }
            }
        } catch is Done {}
        try out.write(contentsOf: Data(buffer))
        return copy
    }

    static func lineCount(_ file: URL) throws -> Int {
        var count = 0
        try LineReader(url: file).forEachLine { _ in count += 1 }
        return count
    }

    /// JSONSerialization over every non-blank line, one thread. Returns the line count.
    static func foundationOneThread(_ file: URL) throws -> Int {
        var lines = 0
        try LineReader(url: file).forEachLine { line in
            guard case .text(_, let bytes) = line, !bytes.isEmpty else { return }
            if (try? JSONSerialization.jsonObject(with: Data(bytes))) != nil { lines += 1 }
        }
        return lines
    }

    /// iapguard's byte-level parser (`JSONDocument`, Foundation-compatible mode) over every non-blank line,
    /// one thread, nothing mapped: the like-for-like figure to `orjson.loads`. Returns the line count.
    static func documentOneThread(_ file: URL) throws -> Int {
        var lines = 0
        try LineReader(url: file).forEachLine { line in
            guard case .text(_, let bytes) = line, !bytes.isEmpty else { return }
            if (try? JSONDocument.parse(bytes, options: .foundationCompatible)) != nil { lines += 1 }
        }
        return lines
    }

    /// The per-line work of ingest without its reader, pipeline and threads: SHA-256 of the line, parse,
    /// map to the models (signed payloads decoded, not verified), one thread, lines already in memory.
    /// Returns seconds (the loading of the lines is not timed).
    static func mapOneThread(_ file: URL, kind: Config.Source.Kind) throws -> Double {
        var lines: [[UInt8]] = []
        try LineReader(url: file).forEachLine { line in
            guard case .text(_, let bytes) = line, !bytes.isEmpty else { return }
            lines.append(Array(bytes))
        }
        let verifier = UncheckedVerifier()
        var records = 0
        let start = DispatchTime.now().uptimeNanoseconds
        for (number, bytes) in lines.enumerated() {
            let hash = Hashing.sha256Hex(Data(bytes))
            let location = "bench:\(number + 1)"
            switch kind {
            case .receipts:
                guard let object = try? JSONObject.parse(bytes) else { continue }
                records +=
                    (try? ReceiptResponseParser(sourceName: "b").parse(object, payloadHash: hash, location: location))?
                    .count ?? 0
            case .signedTransactions:
                let text = String(decoding: bytes, as: UTF8.self)
                if (try? SignedTransactionParser(sourceName: "b", verifier: verifier).parse(
                    text, payloadHash: hash, location: location)) != nil
                {
                    records += 1
                }
            case .notifications:
                guard let object = try? JSONObject.parse(bytes) else { continue }
                if (try? NotificationParser(sourceName: "b", verifier: verifier).parse(
                    object, payloadHash: hash, location: location)) != nil
                {
                    records += 1
                }
            default:
                guard let object = try? JSONObject.parse(bytes) else { continue }
                if (try? BackendRowMapper.credit(object)) != nil { records += 1 }
            }
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        if records == 0 { throw BenchError("\(file.lastPathComponent): no record mapped") }
        return seconds
    }

    /// JSONSerialization on 2 threads: lines read in blocks of 4096, each block split in two halves.
    static func foundationTwoThreads(_ file: URL) throws -> Double {
        var block: [[UInt8]] = []
        func parseBlock() {
            let lines = block
            DispatchQueue.concurrentPerform(iterations: 2) { half in
                let range = half == 0 ? 0..<(lines.count / 2) : (lines.count / 2)..<lines.count
                for index in range { _ = try? JSONSerialization.jsonObject(with: Data(lines[index])) }
            }
            block.removeAll(keepingCapacity: true)
        }
        let (_, seconds) = try Measure.time {
            try LineReader(url: file).forEachLine { line in
                guard case .text(_, let bytes) = line, !bytes.isEmpty else { return }
                block.append(Array(bytes))
                if block.count == 4096 { parseBlock() }
            }
            parseBlock()
        }
        return seconds
    }

    /// iapguard's own ingest path without the store writes: read, hash, parse, map to the models (signed
    /// payloads decoded but not verified), on both cores. Returns seconds.
    static func iapguardParse(
        _ file: URL, kind: Config.Source.Kind, format: Config.Source.Format = .jsonl, config: Config
    ) throws -> Double {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("iapguard-bench-parse-\(UUID())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let store = try SQLiteStore(path: scratch.path)
        try store.migrate()
        guard var source = config.sources.first(where: { $0.kind == kind && $0.format == format }) else {
            throw BenchError("the world config has no \(kind.rawValue) \(format.rawValue) source")
        }
        source.path = file
        let ingestor = SourceIngestor(source: source, verifier: UncheckedVerifier(), configHash: "bench")
        var records = 0
        let (_, seconds) = try Measure.time {
            _ = try ingestor.ingest(store: store, runID: 1, sink: { records += $0.recordCount })
        }
        if records == 0 { throw BenchError("\(file.lastPathComponent): no record parsed") }
        return seconds
    }

    /// CompactJWS decoding of the world's signed transactions (up to 100k), one core.
    static func jwsDecode(_ options: BenchOptions) throws {
        let file = options.worldDirectory.appendingPathComponent("data/transactions.jsonl")
        var texts: [String] = []
        struct Done: Error {}
        do {
            try LineReader(url: file).forEachLine { line in
                guard case .text(_, let bytes) = line,
                    let object = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any],
                    let jws = object["signedTransactionInfo"] as? String
                else { return }
                texts.append(jws)
                if texts.count >= 100_000 { throw Done() }
            }
        } catch is Done {}
        guard !texts.isEmpty else { return }
        let bytes = texts.reduce(0) { $0 + $1.utf8.count }
        var decoded = 0
        let (_, seconds) = Measure.time {
            for text in texts where (try? CompactJWS(text)) != nil { decoded += 1 }
        }
        Measure.line(
            "parse", "CompactJWS decode (\(texts.count) world JWS, \(bytes / texts.count) B each), 1 core",
            "\(Measure.rate(Double(decoded), seconds))  "
                + String(
                    format: "%.1f µs each  %.0f MB/s", seconds / Double(texts.count) * 1e6,
                    Double(bytes) / 1e6 / seconds))
    }
}
