import Dispatch
import Foundation

/// Reads one configured source and hands parsed, verified records to `sink` in batches.
///
/// A bad record is quarantined with `file:line` and the reason, and the rest of the batch goes on. A file
/// whose content (and the config) did not change since it was fully ingested is skipped; its state is
/// recorded only after all its batches were committed.
public struct SourceIngestor {
    public let source: Config.Source
    public let verifier: any AppleRecordVerifier
    public let batchSize: Int
    /// Mixed into each file's state so a config change (trust, apps) re-reads everything.
    public let configHash: String

    /// The wall clock the racy-file rule compares modification times with (tests move it).
    public var clock: @Sendable () -> Int64 = FileIdentity.nowNanoseconds

    /// Hashes of this run's files computed ahead on background threads (see ``FileStatePrefetch``).
    var prefetch: FileStatePrefetch?

    /// The most line bytes handed to one background parse job (16 MiB).
    static let maxParseJobBytes = 16 << 20

    public init(source: Config.Source, verifier: any AppleRecordVerifier, configHash: String, batchSize: Int = 20_000) {
        self.source = source
        self.verifier = verifier
        self.configHash = configHash
        self.batchSize = batchSize
    }

    /// Why `url` names nothing to read: a symbolic link loop or a dangling link is told apart from a missing
    /// path (all three look like "no such file" to a plain existence check).
    static func missingReason(_ url: URL) -> String {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: url.path) else {
            return "no such file or folder"
        }
        errno = 0
        if let resolved = realpath(url.path, nil) {
            free(resolved)
        } else if errno == ELOOP {
            return "a symbolic link loop (too many levels of symbolic links, via \(target))"
        }
        return "a symbolic link to \(target), which does not exist"
    }

    /// The files of this source, in name order (a folder's regular files, or the file itself).
    public func files() throws -> [URL] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: source.path.path, isDirectory: &isDirectory) else {
            throw SourceError(source: source.name, message: "\(source.path.path): \(Self.missingReason(source.path))")
        }
        guard isDirectory.boolValue else { return [source.path] }
        // Subfolders (an archive of older exports, say) are not the source's files: skipped, not read.
        return try FileManager.default.contentsOfDirectory(
            at: source.path, includingPropertiesForKeys: [.isDirectoryKey]
        )
        .filter { url in
            !url.lastPathComponent.hasPrefix(".")
                && (try? url.resourceValues(forKeys: [.isDirectoryKey]))?.isDirectory != true
        }
        .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    /// Ingests every file, calling `sink` with each batch and `fileDone` after each file's state was recorded
    /// (after its last batch). With `skipUnchanged` off (`--full-rebuild`) unchanged files are read again.
    /// `delivered` hears of every file (or database) read, after its records went to `sink`.
    ///
    /// The files are read, parsed and verified on other threads (an ``IngestFeed``) while `sink` writes on
    /// this one; the batches arrive in the order and with the boundaries a one-thread read gives.
    public func ingest(
        store: any PurchaseStore, runID: Int64, sink: (IngestBatch) throws -> Void, shouldStop: () -> Bool = { false },
        skipUnchanged: Bool = true, fileDone: (URL) throws -> Void = { _ in },
        delivered: (SourceHealth.Delivery) -> Void = { _ in }
    ) throws -> WriteCounts {
        if source.format == .postgres {
            try ingestPostgres(sink: sink, shouldStop: shouldStop)
            return WriteCounts()
        }
        let plan = try plan(store: store, skipUnchanged: skipUnchanged)
        let feed = IngestFeed(plans: [plan])
        defer { feed.cancel() }
        return try consume(
            feed.events(0), store: store, runID: runID, sink: sink, shouldStop: shouldStop, fileDone: fileDone,
            delivered: delivered)
    }

    /// What the read of this source needs from the store, taken before reading starts: each file's
    /// previously recorded state (none with `skipUnchanged` off, `--full-rebuild`).
    public func plan(store: any PurchaseStore, skipUnchanged: Bool) throws -> IngestFeed.Plan {
        guard source.format != .postgres else { return IngestFeed.Plan(ingestor: self, files: []) }
        let files = try files()
        var previous: [FileState?] = []
        for file in files {
            previous.append(try previousState(of: file, store: store, skipUnchanged: skipUnchanged))
        }
        return IngestFeed.Plan(ingestor: self, files: Array(zip(files, previous)))
    }

    /// Writes what a feed read from this source, in order: each batch to `sink`, each file's state after its
    /// batches. Returns the files skipped as unchanged. A source error the reader hit is rethrown after the
    /// batches read before it, as a one-thread read would.
    public func consume(
        _ events: IngestFeed.Events, store: any PurchaseStore, runID: Int64, sink: (IngestBatch) throws -> Void,
        shouldStop: () -> Bool = { false }, fileDone: (URL) throws -> Void = { _ in },
        delivered: (SourceHealth.Delivery) -> Void = { _ in }
    ) throws -> WriteCounts {
        if source.format == .postgres {
            try ingestPostgres(sink: sink, shouldStop: shouldStop)
            return WriteCounts()
        }
        var skipped = WriteCounts()
        while let event = try events.next() {
            switch event {
            case .batch(let batch):
                try sink(batch)
            case .skipped(let newIdentity):
                if let newIdentity { try store.setFileState(newIdentity, sourceName: source.name, runID: runID) }
                skipped.filesSkipped += 1
            case .read(let file, let state, let delivery, let whole):
                delivered(delivery)
                // A file read whole says again which of its lines are bad: what an earlier read quarantined
                // and this one did not write again (a line since completed or corrected) is no longer in it.
                if whole {
                    try store.removeQuarantined(
                        sourceName: source.name, fileName: file.lastPathComponent, notSeenIn: runID)
                }
                try store.setFileState(state, sourceName: source.name, runID: runID)
                try fileDone(file)
                if shouldStop() { return skipped }
            }
        }
        return skipped
    }

    /// Reads every file of the plan into `emit`, touching no store: a skipped file, each batch of a read
    /// file, then that file's state to record. Runs on the feed's thread.
    func produce(_ files: [(URL, FileState?)], emit: (IngestFeed.Event) throws -> Void) throws {
        for (file, previous) in files {
            if isUnchangedByStat(file, previous: previous) {
                try emit(.skipped(newIdentity: nil))
                continue
            }
            let (state, prefix) = try prefetchedOrComputedState(of: file, prefixSize: previous?.size)
            if let previous, previous.hasSameContent(as: state) {
                // Same bytes, new identity (touched, copied back): remember the identity for the next run.
                try emit(.skipped(newIdentity: state.statKey != previous.statKey ? state : nil))
                continue
            }
            let sink: (IngestBatch) throws -> Void = { try emit(.batch($0)) }
            // A JSON Lines or CSV file that only grew (its old content, ending at a line break outside quotes,
            // is unchanged): read only the appended lines.
            var delivery: SourceHealth.Delivery
            var whole = true
            if let previous, let prefix, source.format == .jsonl || source.format == .csv, previous.size > 0,
                state.size > previous.size, prefix.endsAtLineBreak, prefix.quotes % 2 == 0,
                prefix.hash + ":" + configHash == previous.contentHash
            {
                delivery = try ingestFile(file, sink: sink, from: UInt64(previous.size), firstLine: prefix.lines + 1)
                delivery.bytes = state.size - previous.size
                whole = false
            } else {
                delivery = try ingestFile(file, sink: sink)
                delivery.bytes = source.format == .sqlite ? nil : state.size
            }
            try emit(.read(file: file, state: state, delivery: delivery, whole: whole))
        }
    }

    func fileState(of file: URL) throws -> FileState {
        try fileState(of: file, prefixSize: nil).state
    }

    /// The state recorded when `file` was last ingested, when unchanged files may be skipped.
    func previousState(of file: URL, store: any PurchaseStore, skipUnchanged: Bool) throws -> FileState? {
        guard skipUnchanged, source.format != .sqlite else { return nil }
        return try store.fileState(sourceName: source.name, path: file.path)
    }

    /// The quick check: same device, inode, size and times as when the same config last hashed it.
    func isUnchangedByStat(_ file: URL, previous: FileState?) -> Bool {
        guard let previous, let key = previous.statKey, previous.contentHash.hasSuffix(":" + configHash) else {
            return false
        }
        return FileIdentity.of(path: file.path)?.key == key
    }

    /// The files this source's ingest will hash (the ones `stat` cannot skip), as background jobs.
    func prefetchJobs(store: any PurchaseStore, skipUnchanged: Bool) throws -> [FileStatePrefetch.Job] {
        guard source.format != .postgres else { return [] }
        var jobs: [FileStatePrefetch.Job] = []
        for file in try files() {
            let previous = try previousState(of: file, store: store, skipUnchanged: skipUnchanged)
            if isUnchangedByStat(file, previous: previous) { continue }
            let prefixSize = previous?.size
            let identity = FileIdentity.of(path: file.path)
            let ingestor = IngestorReference(ingestor: self)
            jobs.append(
                FileStatePrefetch.Job(
                    key: FileStatePrefetch.key(source: source.name, path: file.path), size: identity?.size ?? 0,
                    work: {
                        let before = FileIdentity.of(path: file.path)
                        let (state, prefix) = try ingestor.ingestor.fileState(of: file, prefixSize: prefixSize)
                        return FileStatePrefetch.Result(
                            state: state, prefix: prefix, prefixSize: prefixSize, identity: before)
                    }))
        }
        return jobs
    }

    /// The prefetched state of `file` when there is one for the same prefix and the file's identity has not
    /// changed since it was hashed; else computed now.
    func prefetchedOrComputedState(of file: URL, prefixSize: Int64?) throws -> (state: FileState, prefix: Prefix?) {
        if let prefetch, let hit = prefetch.take(FileStatePrefetch.key(source: source.name, path: file.path)),
            hit.prefixSize == prefixSize, let identity = hit.identity, identity == FileIdentity.of(path: file.path)
        {
            return (hit.state, hit.prefix)
        }
        return try fileState(of: file, prefixSize: prefixSize)
    }

    /// What the first `size` bytes of a file were: their hash, their line count, whether they end a line.
    struct Prefix: Sendable {
        var hash: String
        var lines: Int
        var endsAtLineBreak: Bool
        /// Double quotes in the prefix (CSV only; 0 for other formats): odd means it ends inside a quoted field.
        var quotes: Int
    }

    /// The file's state and, when `prefixSize` is given and the file is at least that long, its prefix.
    ///
    /// The file's identity is taken before it is read and kept in the state only when it is the same after
    /// reading and not racy (see `FileIdentity`), so a file that changed while it was hashed is read again.
    func fileState(of file: URL, prefixSize: Int64?) throws -> (state: FileState, prefix: Prefix?) {
        let before = FileIdentity.of(path: file.path)
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        var hasher = IncrementalSHA256()
        var size: Int64 = 0
        var prefix: Prefix?
        var lines = 0
        var quotes = 0
        var lastByte: UInt8 = 0
        // Quotes matter only in CSV (a line break inside a quoted field); in JSON Lines a quote can be escaped
        // and a raw line break cannot occur inside a string.
        let countsQuotes = source.format == .csv
        func count(_ bytes: Data) {
            bytes.withUnsafeBytes { raw in
                lines += ByteCounter.count(UInt8(ascii: "\n"), in: raw)
                if countsQuotes { quotes += ByteCounter.count(UInt8(ascii: "\""), in: raw) }
                if let last = raw.last { lastByte = last }
            }
        }
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            if let prefixSize, prefix == nil, size + Int64(chunk.count) >= prefixSize {
                let head = chunk.prefix(Int(prefixSize - size))
                hasher.update(head)
                count(head)
                prefix = Prefix(
                    hash: hasher.finalizeHex(), lines: lines, endsAtLineBreak: lastByte == UInt8(ascii: "\n"),
                    quotes: quotes)
                hasher.update(chunk.dropFirst(head.count))
            } else {
                hasher.update(chunk)
                if prefixSize != nil, prefix == nil { count(chunk) }
            }
            size += Int64(chunk.count)
        }
        var statKey: String?
        if let before, before.size == size, before == FileIdentity.of(path: file.path),
            !before.isRacy(now: clock())
        {
            statKey = before.key
        }
        return (
            FileState(
                path: file.path, size: size, contentHash: hasher.finalizeHex() + ":" + configHash, statKey: statKey),
            prefix
        )
    }

    /// Reads one file into `sink`; returns what it delivered (its record count; `bytes` is the caller's).
    @discardableResult
    func ingestFile(
        _ file: URL, sink: (IngestBatch) throws -> Void, from offset: UInt64 = 0, firstLine: Int = 1
    ) throws -> SourceHealth.Delivery {
        var batch = IngestBatch()
        let name = file.lastPathComponent
        var records = 0
        func flush() throws {
            records += batch.recordCount
            if !batch.isEmpty { try sink(batch) }
            batch = IngestBatch()
        }
        // The first line of a CSV record holding a lone CR (the file's line ends cannot be trusted).
        var loneCRLine: Int?
        var sawHeader = false
        func quarantine(_ location: String, _ reason: String, _ raw: some Collection<UInt8>) {
            let excerpt = String(decoding: raw.prefix(4096), as: UTF8.self)
            batch.quarantined.append(
                QuarantinedRecord(
                    sourceName: source.name, location: location, reason: reason, rawExcerpt: excerpt,
                    rawHash: Hashing.sha256Hex(Data(raw))))
        }

        if source.format != .sqlite, let encoding = try Self.utf16Encoding(of: file) {
            throw SourceError(
                source: source.name,
                message: "\(name): the file is UTF-16 (\(encoding) byte order mark); inputs must be UTF-8")
        }
        if source.format != .sqlite, let compression = try Self.compression(of: file) {
            throw SourceError(
                source: source.name,
                message:
                    "\(name): the file is \(compression)-compressed; inputs must be uncompressed UTF-8 text "
                    + "(decompress it first, or point the source at the decompressed file)")
        }
        switch source.format {
        case .jsonl:
            // Lines are parsed and verified `batchSize` at a time on all cores, in the background while the
            // previous block's records go to `sink` on this thread; the records are added in line order with
            // the same batch boundaries as a one-line-at-a-time loop.
            var pending: [PendingLine] = []
            // Parse jobs are also cut by size, so big batches of 11 KB notification lines stay bounded in
            // memory; this does not move the store batch boundaries (those count records in `emit`).
            var pendingBytes = 0
            var inFlight: ParseJob?
            defer { inFlight?.waitForResults() }
            func emit(_ job: ParseJob) throws {
                // Each line's records are moved into the batch, not copied: the job hands its results over.
                var results = job.takeResults()
                for index in results.indices {
                    var result: Result<IngestBatch, any Error> = .success(IngestBatch())
                    swap(&result, &results[index])
                    switch consume result {
                    case .failure(let error): throw error
                    case .success(var fragment): batch.absorb(&fragment)
                    }
                    if batch.recordCount >= batchSize { try flush() }
                }
            }
            func drain() throws {
                guard !pending.isEmpty else { return }
                let job = ParseJob(lines: pending, ingestor: self, fileName: name)
                pending = []
                pendingBytes = 0
                if let previous = inFlight {
                    inFlight = job
                    try emit(previous)
                } else {
                    inFlight = job
                }
            }
            var reader = LineReader(url: file)
            reader.startOffset = offset
            reader.firstLineNumber = firstLine
            try reader.forEachLine { line in
                switch line {
                case .oversize(let number, let length, let head):
                    pending.append(.oversize(number: number, length: length, head: head))
                case .text(let number, let bytes):
                    if bytes.allSatisfy({ $0 == 32 || $0 == 9 }) { return }
                    pending.append(.text(number: number, bytes: Array(bytes)))
                    pendingBytes += bytes.count
                }
                if pending.count >= max(1, batchSize) || pendingBytes >= Self.maxParseJobBytes { try drain() }
            }
            try drain()
            if let last = inFlight {
                inFlight = nil
                try emit(last)
            }
        case .csv:
            var header: [String]?
            // Where the record kind's fields are in the header: computed once, then each record is read by
            // position (a dictionary per record cost about as much as reading the record).
            var fieldPositions: [Int?]?
            var reader = CSVReader(url: file)
            if offset > 0, let names = try Self.csvHeader(of: file) {
                // Appended records only: the header comes from the file's first record.
                header = names
                reader.startOffset = offset
                reader.firstLineNumber = firstLine
            }
            try reader.forEachRecord { result in
                switch result {
                case .failure(let error):
                    guard header != nil else {
                        throw SourceError(
                            source: source.name,
                            message: "\(name):\(error.line): the header row cannot be read: \(error.message)")
                    }
                    quarantine("\(name):\(error.line)", error.message, error.raw)
                    if error.isLoneCR, loneCRLine == nil { loneCRLine = error.line }
                case .success(let record):
                    guard let columns = header else {
                        let names = record.fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                        let required =
                            switch source.kind {
                            case .orders: "order_id"
                            case .users: "user_id"
                            default: "credit_id"
                            }
                        guard names.contains(required) else {
                            throw SourceError(
                                source: source.name,
                                message:
                                    "\(name):\(record.line): the header has no \(required) column (found: \(names.joined(separator: ", ")))"
                            )
                        }
                        var firstColumn: [String: Int] = [:]
                        for (index, column) in names.enumerated() where !column.isEmpty {
                            if let first = firstColumn[column] {
                                throw SourceError(
                                    source: source.name,
                                    message:
                                        "\(name):\(record.line): the header names \(column.prefix(60)) twice (columns \(first + 1) and \(index + 1)); which one holds the data is ambiguous"
                                )
                            }
                            firstColumn[column] = index
                        }
                        header = names
                        sawHeader = true
                        return
                    }
                    let location = "\(name):\(record.line)"
                    // The fields joined again: what the quarantine shows of a bad record.
                    func raw() -> [UInt8] { Array(record.fields.joined(separator: ",").utf8) }
                    guard record.fields.count == columns.count else {
                        quarantine(
                            location, "expected \(columns.count) fields as in the header, found \(record.fields.count)",
                            raw())
                        return
                    }
                    let positions = fieldPositions ?? Self.fieldPositions(kind: source.kind, columns: columns)
                    fieldPositions = positions
                    do {
                        try addBackendRecord(record.fields, positions: positions, location: location, into: &batch)
                    } catch let error as RecordError {
                        quarantine(location, error.message, raw())
                    }
                }
                if batch.recordCount >= batchSize { try flush() }
            }
        case .sqlite:
            guard let query = source.query else {
                throw SourceError(source: source.name, message: "a sqlite source needs a query")
            }
            let database: SQLiteDatabase
            do {
                database = try SQLiteDatabase(path: file.path, mode: .readOnly)
            } catch {
                throw SourceError(source: source.name, message: "\(file.path): cannot open: \(error)")
            }
            var index = 0
            do {
                try database.queryReportingInvalidUTF8(query) { columns, values, invalid in
                    index += 1
                    var row: [String: String] = [:]
                    for (column, value) in zip(columns, values) {
                        if let text = value.textValue { row[column.lowercased()] = text }
                    }
                    let location = "\(name):row \(index)"
                    do {
                        if let column = invalid.first {
                            throw RecordError(
                                "\(columns[column].lowercased()): invalid UTF-8 or a NUL byte in the database's text")
                        }
                        try addBackendRow(row, location: location, into: &batch)
                    } catch let error as RecordError {
                        quarantine(location, error.message, Array(row.description.utf8))
                    }
                    if batch.recordCount >= batchSize { try flush() }
                }
            } catch let error as SQLiteError {
                throw SourceError(
                    source: source.name, message: "\(file.path): the configured query failed: \(error.message)")
            }
        case .postgres:
            throw SourceError(source: source.name, message: "a postgres source is read from its url, not a file")
        }
        try flush()
        if let loneCRLine {
            throw SourceError(
                source: source.name,
                message:
                    "\(name):\(loneCRLine): a lone carriage return (CR) outside quotes in a file whose lines end with LF or CRLF; "
                    + "that record was quarantined, but the file's record boundaries cannot be trusted")
        }
        return SourceHealth.Delivery(
            name: name, bytes: nil, records: records, headerOnly: source.format == .csv && sawHeader && records == 0)
    }

    /// The lower-cased column names of a CSV file's first record (nil when it has none).
    static func csvHeader(of file: URL) throws -> [String]? {
        struct Found: Error { var names: [String] }
        do {
            try CSVReader(url: file).forEachRecord { result in
                if case .success(let record) = result {
                    throw Found(names: record.fields.map { $0.trimmingCharacters(in: .whitespaces).lowercased() })
                }
            }
        } catch let found as Found {
            return found.names
        }
        return nil
    }

    /// `"little-endian"` or `"big-endian"` when the file starts with a UTF-16 byte order mark.
    public static func utf16Encoding(of file: URL) throws -> String? {
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        let head = try handle.read(upToCount: 2) ?? Data()
        if head == Data([0xFF, 0xFE]) { return "little-endian" }
        if head == Data([0xFE, 0xFF]) { return "big-endian" }
        return nil
    }

    /// The compression format `file` starts with the magic number of (`"gzip"`, `"zip"`, `"zstd"`, `"xz"`,
    /// `"bzip2"`), or nil. Read as text, such a file is lines of binary that would each be quarantined.
    public static func compression(of file: URL) throws -> String? {
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        let head = [UInt8](try handle.read(upToCount: 10) ?? Data())
        func starts(_ magic: [UInt8]) -> Bool { head.starts(with: magic) }
        if starts([0x1F, 0x8B]) { return "gzip" }
        if starts([0x50, 0x4B, 0x03, 0x04]) || starts([0x50, 0x4B, 0x05, 0x06]) { return "zip" }
        if starts([0x28, 0xB5, 0x2F, 0xFD]) { return "zstd" }
        if starts([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return "xz" }
        // "BZh", the block size, then the first block's magic: text may start with "BZh".
        if starts([0x42, 0x5A, 0x68]), head.count == 10, (0x31...0x39).contains(head[3]),
            Array(head[4...]) == [0x31, 0x41, 0x59, 0x26, 0x53, 0x59]
        {
            return "bzip2"
        }
        return nil
    }

    /// A JSON Lines line waiting to be parsed.
    enum PendingLine: Sendable {
        case text(number: Int, bytes: [UInt8])
        case oversize(number: Int, length: Int, head: [UInt8])
    }

    /// Parses (and so verifies) `lines` on all cores. One result per line, in order: the records the line
    /// adds (a quarantined record when it is bad), or an error that is not about the record itself.
    func parseLines(_ lines: [PendingLine], fileName: String) -> [Result<IngestBatch, any Error>] {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        guard cores > 1, lines.count > 1 else {
            return lines.map { parsePendingLine($0, fileName: fileName) }
        }
        // A few chunks per core, so a slow chunk (uncached chains) does not leave a core idle.
        let chunkCount = min(lines.count, cores * 4)
        let chunkSize = (lines.count + chunkCount - 1) / chunkCount
        let results = LineResults(count: lines.count)
        // Parsing reads only `source` and `verifier` (immutable, Sendable) from the ingestor.
        let ingestor = IngestorReference(ingestor: self)
        WorkerThreads.shared.apply(iterations: chunkCount) { chunk in
            let start = chunk * chunkSize
            let end = min(start + chunkSize, lines.count)
            guard start < end else { return }
            for index in start..<end {
                results.set(index, ingestor.ingestor.parsePendingLine(lines[index], fileName: fileName))
            }
        }
        return results.values()
    }

    func parsePendingLine(_ line: PendingLine, fileName: String) -> Result<IngestBatch, any Error> {
        var fragment = IngestBatch()
        switch line {
        case .oversize(let number, let length, let head):
            fragment.quarantined.append(
                quarantineRecord(
                    "\(fileName):\(number)", "line is \(length) bytes, longer than the 8 MiB limit", head))
        case .text(let number, let bytes):
            let location = "\(fileName):\(number)"
            do {
                try parseLine(bytes[...], location: location, into: &fragment)
                // Hashed here, on a parse thread, rather than by the writer; in place, not copied.
                for index in fragment.sightings.indices { fragment.sightings[index].cacheSightingID() }
            } catch let error as RecordError {
                fragment.quarantined.append(quarantineRecord(location, error.message, bytes))
            } catch let refused as RefusedSignedRecord {
                fragment.quarantined.append(quarantineRecord(location, refused.reason, bytes))
                fragment.sightings = refused.copies
                for index in fragment.sightings.indices { fragment.sightings[index].cacheSightingID() }
            } catch {
                return .failure(error)
            }
        }
        return .success(fragment)
    }

    func quarantineRecord(_ location: String, _ reason: String, _ raw: some Collection<UInt8>) -> QuarantinedRecord {
        let excerpt = String(decoding: raw.prefix(4096), as: UTF8.self)
        return QuarantinedRecord(
            sourceName: source.name, location: location, reason: reason, rawExcerpt: excerpt,
            rawHash: Hashing.sha256Hex(Data(raw)))
    }

    func parseLine(_ bytes: ArraySlice<UInt8>, location: String, into batch: inout IngestBatch) throws {
        let payloadHash = bytes.withUnsafeBytes { Hashing.sha256Hex($0) }
        switch source.kind {
        case .receipts:
            let object = try JSONObject.parse(bytes)
            batch.sightings += try ReceiptResponseParser(sourceName: source.name).parse(
                object, payloadHash: payloadHash, location: location)
        case .signedTransactions:
            // Only this parser takes the line as a `String`; `JSONObject.parse` validates UTF-8 itself (and
            // says "invalid UTF-8" as this check does), so the other kinds skip the copy.
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw RecordError("invalid UTF-8")
            }
            let parser = SignedTransactionParser(sourceName: source.name, verifier: verifier)
            do {
                batch.sightings.append(try parser.parse(text, payloadHash: payloadHash, location: location))
            } catch let error as RecordError {
                // A refused record whose transaction id can still be read is a tampered copy of it: kept as a
                // failed sighting too, or a credit of it would look like one Apple never sent.
                let copies = parser.refusedCopies(of: text, payloadHash: payloadHash, location: location)
                if copies.isEmpty { throw error }
                throw RefusedSignedRecord(reason: error.message, copies: copies)
            }
        case .notifications:
            let object = try JSONObject.parse(bytes, rejectingDuplicateKeys: true)
            let parser = NotificationParser(sourceName: source.name, verifier: verifier)
            do {
                let (notification, sighting) = try parser.parse(object, payloadHash: payloadHash, location: location)
                batch.notifications.append(notification)
                if let sighting { batch.sightings.append(sighting) }
            } catch let error as RecordError {
                // A refused nested transaction is a tampered copy of it, as in a signed-transactions source.
                let copies = parser.refusedTransactionCopies(of: object, payloadHash: payloadHash, location: location)
                if copies.isEmpty { throw error }
                throw RefusedSignedRecord(reason: error.message, copies: copies)
            }
        case .orders:
            let object = try JSONObject.parse(bytes)
            batch.orders.append((try BackendRowMapper.order(object), source.name, location))
        case .credits:
            let object = try JSONObject.parse(bytes)
            batch.credits.append((try BackendRowMapper.credit(object), source.name, location))
        case .users:
            let object = try JSONObject.parse(bytes)
            batch.users.append((try BackendRowMapper.user(object), source.name, location))
        }
    }

    /// Adds one CSV record, its fields read by position (the same record as ``addBackendRow(_:location:into:)``
    /// makes of the header → field dictionary).
    func addBackendRecord(
        _ fields: [String], positions: [Int?], location: String, into batch: inout IngestBatch
    ) throws {
        switch source.kind {
        case .orders:
            let values = BackendFieldValues<BackendRowMapper.OrderField>(fields: fields, positions: positions)
            batch.orders.append((try BackendRowMapper.order(values), source.name, location))
        case .credits:
            let values = BackendFieldValues<BackendRowMapper.CreditField>(fields: fields, positions: positions)
            batch.credits.append((try BackendRowMapper.credit(values), source.name, location))
        case .users:
            let values = BackendFieldValues<BackendRowMapper.UserField>(fields: fields, positions: positions)
            batch.users.append((try BackendRowMapper.user(values), source.name, location))
        default:
            throw RecordError("\(source.kind.rawValue) sources are JSON Lines only")
        }
    }

    /// Where the fields of `kind`'s records are among a CSV header's `columns`, by field position.
    static func fieldPositions(kind: Config.Source.Kind, columns: [String]) -> [Int?] {
        switch kind {
        case .orders: BackendFieldValues<BackendRowMapper.OrderField>.positions(in: columns)
        case .credits: BackendFieldValues<BackendRowMapper.CreditField>.positions(in: columns)
        case .users: BackendFieldValues<BackendRowMapper.UserField>.positions(in: columns)
        default: []
        }
    }

    func addBackendRow(_ row: [String: String], location: String, into batch: inout IngestBatch) throws {
        switch source.kind {
        case .orders:
            batch.orders.append((try BackendRowMapper.order(row), source.name, location))
        case .credits:
            batch.credits.append((try BackendRowMapper.credit(row), source.name, location))
        case .users:
            batch.users.append((try BackendRowMapper.user(row), source.name, location))
        default:
            throw RecordError("\(source.kind.rawValue) sources are JSON Lines only")
        }
    }
}

/// One block of lines being parsed in the background (``SourceIngestor/parseLines(_:fileName:)``).
private final class ParseJob: @unchecked Sendable {
    private let group = DispatchGroup()
    /// Written once by the background block before `group.leave()`, read after `group.wait()`.
    private var results: [Result<IngestBatch, any Error>] = []

    init(lines: [SourceIngestor.PendingLine], ingestor: SourceIngestor, fileName: String) {
        let reference = IngestorReference(ingestor: ingestor)
        group.enter()
        // A thread of its own at the pool's priority (``WorkerThreads/lowerPriority()``): parsing runs ahead of
        // the writer, and must not take the writer's core.
        let thread = Thread { [self] in
            WorkerThreads.lowerPriority()
            results = reference.ingestor.parseLines(lines, fileName: fileName)
            group.leave()
        }
        thread.name = "iapguard.parse"
        thread.start()
    }

    /// Waits for the block and returns one result per line, in order.
    @discardableResult
    func waitForResults() -> [Result<IngestBatch, any Error>] {
        group.wait()
        return results
    }

    /// Waits for the block and hands its results over: the job keeps none, so the caller holds the only
    /// reference to each line's records and can move them.
    func takeResults() -> [Result<IngestBatch, any Error>] {
        group.wait()
        defer { results = [] }
        return results
    }
}

/// The ingestor as seen by the parsing threads, which only call its parsing methods (they read the
/// immutable `source` and the Sendable `verifier`).
private struct IngestorReference: @unchecked Sendable {
    let ingestor: SourceIngestor
}

/// Per-line results of ``SourceIngestor/parseLines(_:fileName:)``, each slot written by one thread.
private final class LineResults: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [Result<IngestBatch, any Error>?]

    init(count: Int) {
        slots = Array(repeating: nil, count: count)
    }

    func set(_ index: Int, _ result: Result<IngestBatch, any Error>) {
        lock.lock()
        slots[index] = result
        lock.unlock()
    }

    func values() -> [Result<IngestBatch, any Error>] {
        lock.lock()
        defer { lock.unlock() }
        return slots.map { $0 ?? .success(IngestBatch()) }
    }
}

extension IngestBatch {
    /// Moves `other`'s records after this batch's, kind by kind, leaving `other` empty. A line's single
    /// record (the usual case) is moved out of its array; a copy would retain each of its strings.
    fileprivate mutating func absorb(_ other: inout IngestBatch) {
        func move<Element>(_ from: inout [Element], to into: inout [Element]) {
            if from.count == 1 {
                into.append(from.removeLast())
            } else if !from.isEmpty {
                into.append(contentsOf: from)
                from.removeAll()
            }
        }
        move(&other.sightings, to: &sightings)
        move(&other.orders, to: &orders)
        move(&other.credits, to: &credits)
        move(&other.notifications, to: &notifications)
        move(&other.quarantined, to: &quarantined)
        move(&other.users, to: &users)
    }
}

/// A source that could not be read at all (missing file, unreadable, bad header).
public struct SourceError: Error, Sendable, CustomStringConvertible {
    public let source: String
    public let message: String
    public var description: String { "source \(source): \(message)" }
}
