import Foundation

/// Splits each input file of a world into the base the full run ingests and the day added before the
/// incremental run (appended, or as a new daily file): the records of the world's last day, or the last 1 %
/// of the lines (``cut(_:headerLines:into:dayStart:)``). Streaming, so a 17 GB world needs neither 17 GB of
/// memory nor, in place, a 17 GB copy.
///
/// In place, each world file is truncated at its cut after its tail was saved under `tails/`, and a
/// manifest records the cut; `appendTails` puts the tails back, so the world ends byte for byte as it
/// started. If the run is killed in between, `restoreInterrupted` (called when the stage starts again)
/// appends the saved tails to the files still at their cut.
struct InputSplit {
    struct Part {
        /// What the source's `path` becomes: the file the full run reads (a copy, or the world file itself
        /// when in place), or its folder (daily files).
        var source: URL
        /// The file the tail is appended to, or written as (daily files).
        var base: URL
        var tail: URL
        var tailLines: Int
        /// The CSV header, written first in a daily file.
        var header = Data()
    }

    private struct ManifestEntry: Codable {
        var path: String
        var cut: UInt64
        var tail: String
    }

    /// How the full run's input and the day's 1 % are laid out.
    enum Layout {
        /// One file per source that grows: the tail is appended (the old part is hashed to prove it unchanged).
        case appended
        /// The world's own files, truncated and grown back (`appended`, without a copy).
        case inPlace
        /// A folder per source: the base is one file, the day's records a new file beside it (with the CSV
        /// header), as an export that writes one file per day does; unchanged files are told by `stat`.
        case dailyFiles
        /// `dailyFiles` without a copy: the base is a hard link to the world's own file, truncated at its cut;
        /// the tail goes to the day file, and back onto the world file when the stage ends (`restoreWorld`).
        case dailyFilesInPlace
    }

    let folder: URL
    let layout: Layout
    private var inPlace: Bool { layout == .inPlace || layout == .dailyFilesInPlace }
    private var daily: Bool { layout == .dailyFiles || layout == .dailyFilesInPlace }
    private(set) var parts: [Part] = []
    private var tails: URL { folder.appendingPathComponent("tails") }
    private static func manifest(in folder: URL) -> URL {
        folder.appendingPathComponent("tails/in-place.json")
    }

    init(folder: URL, layout: Layout) throws {
        self.folder = folder
        self.layout = layout
        try FileManager.default.createDirectory(at: tails, withIntermediateDirectories: true)
    }

    /// Cuts `file` into the base the full run reads and the day added before the daily run, keeping
    /// `headerLines` out of both counts. With `dayStart`, by time: the records dated at or after it
    /// (``RecordTime``) are the day, wherever they are in the file, as a world split at its last day; the
    /// world's files are written per user, not in time order. Without it (and always in place, where the
    /// file can only be truncated), the last 1 % of the lines (at least one): 1 % of the users with their
    /// whole history, a harder day for the scope, and time indexes written all over.
    mutating func cut(_ file: URL, headerLines: Int, into data: URL, dayStart: Int64? = nil) throws -> Part {
        let byTime = dayStart != nil && !inPlace
        // By line: the last 1 % of the records (the split by time counts the day's records as it writes them).
        let lines = byTime ? 0 : try Self.lineCount(file)
        let records = lines - headerLines
        let keep = headerLines + records - max(1, records / 100)
        let cut = byTime ? 0 : try Self.offset(ofLine: keep, in: file)
        let size = try Self.size(of: file)
        let tail = tails.appendingPathComponent(file.lastPathComponent)
        if !byTime { try Self.copy(file, range: cut..<size, to: tail) }
        var header = Data()
        var source: URL
        let base: URL
        var oldPart: URL?
        if daily {
            let name = file.deletingPathExtension().lastPathComponent
            let ext = file.pathExtension
            source = data.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: source, withIntermediateDirectories: true)
            let baseFile = source.appendingPathComponent("\(name)-1-base.\(ext)")
            if inPlace {
                try truncateRecorded(file, cut: cut, tail: tail)
                guard link(file.path, baseFile.path) == 0 else {
                    throw BenchError(
                        "cannot link \(file.path) to \(baseFile.path) (same filesystem needed): "
                            + String(cString: strerror(errno)))
                }
            } else {
                oldPart = baseFile
            }
            base = source.appendingPathComponent("\(name)-2-day.\(ext)")
            if headerLines > 0 {
                let handle = try FileHandle(forReadingFrom: file)
                defer { try? handle.close() }
                header = try handle.read(upToCount: Int(try Self.offset(ofLine: headerLines, in: file))) ?? Data()
            }
        } else if inPlace {
            try truncateRecorded(file, cut: cut, tail: tail)
            base = file
            source = file
        } else {
            base = data.appendingPathComponent(file.lastPathComponent)
            source = base
            oldPart = base
        }
        var tailLines = lines - keep
        if let oldPart {
            if let dayStart, byTime {
                tailLines = try Self.partition(
                    file, headerLines: headerLines, dayStart: dayStart, base: oldPart, day: tail)
            } else {
                try Self.copy(file, range: 0..<cut, to: oldPart)
            }
        }
        let part = Part(source: source, base: base, tail: tail, tailLines: tailLines, header: header)
        parts.append(part)
        return part
    }

    /// Writes the header and the records dated before `dayStart` to `base`, the others to `day`, streaming;
    /// returns the day's record count.
    private static func partition(
        _ file: URL, headerLines: Int, dayStart: Int64, base: URL, day: URL
    ) throws -> Int {
        FileManager.default.createFile(atPath: base.path, contents: nil)
        FileManager.default.createFile(atPath: day.path, contents: nil)
        let input = try FileHandle(forReadingFrom: file)
        let baseOutput = try FileHandle(forWritingTo: base)
        let dayOutput = try FileHandle(forWritingTo: day)
        defer {
            try? input.close()
            try? baseOutput.close()
            try? dayOutput.close()
        }
        let csv = file.pathExtension.lowercased() == "csv"
        var columns: [Int] = []
        var lineNumber = 0
        var dayLines = 0
        var baseBuffer: [UInt8] = []
        var dayBuffer: [UInt8] = []
        var pending: [UInt8] = []
        func route(_ line: ArraySlice<UInt8>) {
            defer { lineNumber += 1 }
            if lineNumber < headerLines {
                if csv, lineNumber == headerLines - 1 { columns = RecordTime.timeColumns(header: line) }
                baseBuffer += line
                baseBuffer.append(UInt8(ascii: "\n"))
                return
            }
            let time = csv ? RecordTime.csv(line, columns: columns) : RecordTime.json(line)
            if let time, time >= dayStart {
                dayBuffer += line
                dayBuffer.append(UInt8(ascii: "\n"))
                dayLines += 1
            } else {
                baseBuffer += line
                baseBuffer.append(UInt8(ascii: "\n"))
            }
        }
        while let chunk = try input.read(upToCount: 1 << 22), !chunk.isEmpty {
            pending += chunk
            var start = pending.startIndex
            while let end = pending[start...].firstIndex(of: UInt8(ascii: "\n")) {
                route(pending[start..<end])
                start = end + 1
            }
            pending.removeSubrange(..<start)
            if baseBuffer.count > 1 << 22 {
                try baseOutput.write(contentsOf: baseBuffer)
                baseBuffer.removeAll(keepingCapacity: true)
            }
            if dayBuffer.count > 1 << 22 {
                try dayOutput.write(contentsOf: dayBuffer)
                dayBuffer.removeAll(keepingCapacity: true)
            }
        }
        if !pending.isEmpty { route(pending[...]) }
        try baseOutput.write(contentsOf: baseBuffer)
        try dayOutput.write(contentsOf: dayBuffer)
        return dayLines
    }

    /// Records the cut in the manifest, then truncates the world's file there (in place).
    private func truncateRecorded(_ file: URL, cut: UInt64, tail: URL) throws {
        var entries = try Self.readManifest(in: folder)
        entries.append(ManifestEntry(path: file.path, cut: cut, tail: tail.path))
        try JSONEncoder().encode(entries).write(to: Self.manifest(in: folder), options: .atomic)
        guard truncate(file.path, off_t(cut)) == 0 else {
            throw BenchError("cannot truncate \(file.path): \(String(cString: strerror(errno)))")
        }
    }

    /// Appends each saved tail to its base file (in place: restores the world), or writes it as the day's
    /// new file (daily files).
    func appendTails() throws {
        for part in parts {
            if daily {
                FileManager.default.createFile(atPath: part.base.path, contents: part.header)
            }
            try Self.append(part.tail, to: part.base)
        }
        if layout == .inPlace { try FileManager.default.removeItem(at: Self.manifest(in: folder)) }
    }

    /// Daily files in place: puts the tails back onto the world's files once the stage is done with them
    /// (the bases, hard links to those files, then grow too; the store is not read again).
    func restoreWorld() throws {
        guard layout == .dailyFilesInPlace else { return }
        try Self.restoreInterrupted(folder: folder, why: "after the daily-files run")
    }

    /// Puts back the tails of an in-place split that was interrupted before `appendTails`.
    static func restoreInterrupted(folder: URL, why: String = "from an interrupted in-place run") throws {
        let entries = try readManifest(in: folder)
        for entry in entries {
            let file = URL(fileURLWithPath: entry.path)
            let size = try size(of: file)
            let tail = URL(fileURLWithPath: entry.tail)
            let tailSize = try self.size(of: tail)
            if size == entry.cut {
                try append(tail, to: file)
                print("incr    restored \(file.path) \(why)")
            } else if size != entry.cut + tailSize {
                throw BenchError("\(file.path) is neither at its cut nor restored; restore it from \(tail.path)")
            }
        }
        if !entries.isEmpty { try FileManager.default.removeItem(at: manifest(in: folder)) }
    }

    private static func readManifest(in folder: URL) throws -> [ManifestEntry] {
        let url = manifest(in: folder)
        guard FileManager.default.fileExists(atPath: url.path) else { return [] }
        return try JSONDecoder().decode([ManifestEntry].self, from: Data(contentsOf: url))
    }

    private static func size(of file: URL) throws -> UInt64 {
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        return (attributes[.size] as? NSNumber)?.uint64Value ?? 0
    }

    /// Lines in the file: line breaks, plus one when the last line has none.
    static func lineCount(_ file: URL) throws -> Int {
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        var count = 0
        var last: UInt8 = UInt8(ascii: "\n")
        while let chunk = try handle.read(upToCount: 1 << 22), !chunk.isEmpty {
            chunk.withUnsafeBytes { raw in
                for byte in raw where byte == UInt8(ascii: "\n") { count += 1 }
                if let end = raw.last { last = end }
            }
        }
        return count + (last == UInt8(ascii: "\n") ? 0 : 1)
    }

    /// Byte offset where line `index` (0-based) starts.
    static func offset(ofLine index: Int, in file: URL) throws -> UInt64 {
        if index == 0 { return 0 }
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        var seen = 0
        var position: UInt64 = 0
        while let chunk = try handle.read(upToCount: 1 << 22), !chunk.isEmpty {
            let found: Int? = chunk.withUnsafeBytes { raw in
                for (offset, byte) in raw.enumerated() where byte == UInt8(ascii: "\n") {
                    seen += 1
                    if seen == index { return offset + 1 }
                }
                return nil
            }
            if let found { return position + UInt64(found) }
            position += UInt64(chunk.count)
        }
        throw BenchError("\(file.path) has fewer than \(index) lines")
    }

    private static func copy(_ file: URL, range: Range<UInt64>, to target: URL) throws {
        FileManager.default.createFile(atPath: target.path, contents: nil)
        let output = try FileHandle(forWritingTo: target)
        defer { try? output.close() }
        try stream(file, range: range, into: output)
    }

    private static func append(_ file: URL, to target: URL) throws {
        let output = try FileHandle(forWritingTo: target)
        defer { try? output.close() }
        try output.seekToEnd()
        try stream(file, range: 0..<(try size(of: file)), into: output)
    }

    private static func stream(_ file: URL, range: Range<UInt64>, into output: FileHandle) throws {
        let input = try FileHandle(forReadingFrom: file)
        defer { try? input.close() }
        try input.seek(toOffset: range.lowerBound)
        var left = range.upperBound - range.lowerBound
        while left > 0, let chunk = try input.read(upToCount: Int(min(left, 1 << 22))), !chunk.isEmpty {
            try output.write(contentsOf: chunk)
            left -= UInt64(chunk.count)
        }
    }
}
