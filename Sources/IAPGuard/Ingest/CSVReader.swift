import Foundation

/// A streaming RFC 4180 reader: header row, comma separator, `"` quoting with `""` escapes, CRLF, LF or
/// CR line ends, newlines inside quoted fields, a UTF-8 byte order mark at the start ignored. Memory is
/// bounded by the longest record.
///
/// The first line end outside quotes decides how the file's lines end (a CR followed by more text before
/// it, in the header, is a lone CR when the file's first block holds a LF: a CR-only file has none). In a file whose lines end with LF
/// or CRLF, a lone CR outside quotes (followed by more text on the same line) does not end a record: the
/// record is an error (``RecordLocatedError/isLoneCR``), so a stray CR cannot cut one record into two bogus
/// ones. A CR at the end of a line or of the file is still a line end.
///
/// A stray quote swallows the lines after it into its field. A quote that is never closed would swallow the
/// rest of the file: the record it opens is reported as unterminated. One that a later stray quote closes
/// makes a bad record of every line in between. Either way the bad record is reported on its first line and
/// reading resumes on the line after it (at most ``maxRecoveries`` times per file; after that a bad record
/// spans its lines, and an unterminated one the rest of the file). A quoted field with line breaks in a
/// good record is kept as it is.
public struct CSVReader {
    /// One record: its fields and the line it starts on (1-based).
    public struct Record {
        public var line: Int
        public var fields: [String]
    }

    public let url: URL
    public let maxRecordLength: Int
    /// How many unterminated quotes per file are recovered from by reading on after them.
    public let maxRecoveries: Int

    /// How much of a bad record's bytes its error carries.
    static let maxRawHead = 4096

    /// The UTF-8 byte order mark.
    static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Byte offset to start reading at (the start of a record, outside quotes), and its line number: reading
    /// only what was appended to a file.
    public var startOffset: UInt64 = 0
    public var firstLineNumber = 1

    public init(url: URL, maxRecordLength: Int = 8 << 20, maxRecoveries: Int = 16) {
        self.url = url
        self.maxRecordLength = maxRecordLength
        self.maxRecoveries = maxRecoveries
    }

    /// How the file's lines end, as its first line end outside quotes shows.
    private enum LineEnds {
        /// LF or CRLF.
        case lf
        /// CR alone (old Mac exports).
        case cr
    }

    /// Where to (re)start reading: a byte offset, its line number, and whether the byte before it was a
    /// `\r` (so a `\n` there does not end another line).
    private struct Position {
        var offset: UInt64
        var line: Int
        var afterCR: Bool
    }

    /// Calls `body` with each record or with a per-record error (`line`, message). Fields are decoded as
    /// UTF-8; a record with invalid UTF-8 or a NUL byte is an error for that record only.
    public func forEachRecord(_ body: (Result<Record, RecordLocatedError>) throws -> Void) throws {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        let head = try handle.read(upToCount: 3) ?? Data()
        var next: Position? =
            startOffset > 0
            ? Position(offset: startOffset, line: firstLineNumber, afterCR: false)
            : Position(offset: head.starts(with: Self.byteOrderMark) ? 3 : 0, line: 1, afterCR: false)
        var recoveries = 0
        while let start = next {
            try handle.seek(toOffset: start.offset)
            next = try read(handle, from: start, readingOnAfterQuotes: recoveries < maxRecoveries, body)
            if next != nil { recoveries += 1 }
        }
    }

    /// Reads records from `start` to the end of the file. With `readingOnAfterQuotes`, returns where to read
    /// on (the line after the bad record's first line) when the file ends inside a quoted field, or when a
    /// record whose quoted field ran over a line end is bad: a stray quote, not a field with line breaks,
    /// made it swallow the lines after it. Else reads to the end and returns `nil`.
    private func read(
        _ handle: FileHandle, from start: Position, readingOnAfterQuotes: Bool,
        _ body: (Result<Record, RecordLocatedError>) throws -> Void
    ) throws -> Position? {
        var lineEnds: LineEnds?
        var fields: [String] = []
        var field: [UInt8] = []
        var inQuotes = false
        var afterQuote = false
        var line = start.line
        var recordStart = start.line
        var recordLength = 0
        var badRecord: String?
        var loneCR = false
        // After a resumed start just past a CR: a LF there belongs to that line end.
        var skipLF = start.afterCR
        // A CR outside quotes whose meaning depends on the next byte.
        var pendingCR = false
        var offset = start.offset
        // The first line break inside the current record (only set while in quotes): the resume point.
        var firstBreak: Position?
        // The start of the current record's bytes, kept for the error (quarantine excerpt).
        var rawHead: [UInt8] = []
        // Whether the first block read holds a LF: then a CR before the first line end (in the header) is a
        // lone CR, not the line end of a CR-only file, which has no LF at all.
        var lfAhead = false
        var firstBlock = true

        func finishField() {
            if field.contains(0) {
                badRecord = badRecord ?? "NUL byte in field \(fields.count + 1)"
                fields.append("")
            } else if let s = String(validating: field, as: UTF8.self) {
                fields.append(s)
            } else {
                badRecord = badRecord ?? "invalid UTF-8 in field \(fields.count + 1)"
                fields.append("")
            }
            field.removeAll(keepingCapacity: true)
        }
        // Ends the record; returns where to read on when it is a bad record whose quoted field ran over a line
        // end (see ``read(_:from:_:)``).
        func finishRecord() throws -> Position? {
            finishField()
            var resume: Position?
            if var message = badRecord {
                if readingOnAfterQuotes, let firstBreak, !message.hasPrefix("unterminated") {
                    resume = firstBreak
                    message += " (a quoted field runs over a line end; reading on from line \(firstBreak.line))"
                    if let end = rawHead.firstIndex(where: { $0 == UInt8(ascii: "\n") || $0 == UInt8(ascii: "\r") }) {
                        rawHead.removeSubrange(end...)
                    }
                }
                while rawHead.last == UInt8(ascii: "\n") || rawHead.last == UInt8(ascii: "\r") { rawHead.removeLast() }
                try body(
                    .failure(RecordLocatedError(line: recordStart, message: message, raw: rawHead, isLoneCR: loneCR)))
            } else if !(fields.count == 1 && fields[0].isEmpty) {
                try body(.success(Record(line: recordStart, fields: fields)))
            }
            fields.removeAll(keepingCapacity: true)
            badRecord = nil
            loneCR = false
            afterQuote = false
            recordLength = 0
            recordStart = line
            firstBreak = nil
            rawHead.removeAll(keepingCapacity: true)
            return resume
        }

        while let data = try handle.read(upToCount: 1 << 20), !data.isEmpty {
            // Copied to an array: iterating `Data` costs a call per byte (a closure over its bytes would make
            // every access to this loop's state an exclusivity check).
            let chunk = [UInt8](data)
            if firstBlock {
                firstBlock = false
                lfAhead = chunk.contains(UInt8(ascii: "\n"))
            }
            for byte in chunk {
                offset += 1
                recordLength += 1
                if recordLength > maxRecordLength, badRecord == nil {
                    badRecord = "record longer than \(maxRecordLength) bytes"
                }
                if skipLF {
                    skipLF = false
                    if byte == UInt8(ascii: "\n") { continue }
                }
                if pendingCR {
                    pendingCR = false
                    if byte == UInt8(ascii: "\n") {
                        // CRLF.
                        if lineEnds == nil { lineEnds = .lf }
                        if let resume = try finishRecord() { return resume }
                        continue
                    }
                    if byte == UInt8(ascii: "\r") || lineEnds == .cr || (lineEnds == nil && !lfAhead) {
                        // A CR line end (a CR-only file, or a blank line after it).
                        if lineEnds == nil { lineEnds = .cr }
                        if let resume = try finishRecord() { return resume }
                    } else {
                        // A lone CR inside a line of an LF file: one record, and a bad one.
                        line -= 1
                        badRecord =
                            badRecord ?? "a lone carriage return (CR) outside quotes in field \(fields.count + 1)"
                        loneCR = true
                    }
                }
                if rawHead.count < Self.maxRawHead { rawHead.append(byte) }
                if inQuotes {
                    if byte == UInt8(ascii: "\"") {
                        inQuotes = false
                        afterQuote = true
                    } else {
                        if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                            if firstBreak == nil {
                                firstBreak = Position(
                                    offset: offset, line: recordStart + 1, afterCR: byte == UInt8(ascii: "\r"))
                            }
                        }
                        if byte == UInt8(ascii: "\n") { line += 1 }
                        if badRecord == nil { field.append(byte) }
                    }
                    continue
                }
                switch byte {
                case UInt8(ascii: "\""):
                    if afterQuote {
                        // An escaped quote ("") inside a quoted field.
                        field.append(byte)
                        inQuotes = true
                        afterQuote = false
                    } else if field.isEmpty {
                        inQuotes = true
                    } else {
                        badRecord = badRecord ?? "a quote inside an unquoted field \(fields.count + 1)"
                    }
                case UInt8(ascii: ","):
                    finishField()
                    afterQuote = false
                case UInt8(ascii: "\r"):
                    line += 1
                    pendingCR = true
                case UInt8(ascii: "\n"):
                    line += 1
                    if lineEnds == nil { lineEnds = .lf }
                    if let resume = try finishRecord() { return resume }
                default:
                    if afterQuote {
                        badRecord = badRecord ?? "text after a closing quote in field \(fields.count + 1)"
                    }
                    if badRecord == nil { field.append(byte) }
                }
            }
        }
        if pendingCR, let resume = try finishRecord() { return resume }
        if inQuotes {
            let resume = readingOnAfterQuotes ? firstBreak : nil
            badRecord =
                "unterminated quoted field \(fields.count + 1): its quote is never closed"
                + (resume == nil ? "" : " (reading on from line \(recordStart + 1))")
            _ = try finishRecord()
            return resume
        } else if !field.isEmpty || !fields.isEmpty {
            return try finishRecord()
        }
        return nil
    }
}

/// A record-level error with the line it starts on.
public struct RecordLocatedError: Error, Sendable {
    public var line: Int
    public var message: String
    /// The start of the record's bytes (at most 4 KiB, line end removed), for the quarantine.
    public var raw: [UInt8] = []
    /// The record holds a lone CR in a file whose lines end with LF: the file's line ends cannot be trusted.
    public var isLoneCR = false
}
