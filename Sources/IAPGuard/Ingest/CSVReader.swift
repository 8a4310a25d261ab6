import Foundation

/// A streaming RFC 4180 reader: header row, comma separator, `"` quoting with `""` escapes, CRLF or LF
/// line ends, newlines inside quoted fields. Memory is bounded by the longest record.
public struct CSVReader {
    /// One record: its fields and the line it starts on (1-based).
    public struct Record {
        public var line: Int
        public var fields: [String]
    }

    public let url: URL
    public let maxRecordLength: Int

    public init(url: URL, maxRecordLength: Int = 8 << 20) {
        self.url = url
        self.maxRecordLength = maxRecordLength
    }

    /// Calls `body` with each record or with a per-record error (`line`, message). Fields are decoded as
    /// UTF-8; a record with invalid UTF-8 is an error for that record only.
    public func forEachRecord(_ body: (Result<Record, RecordLocatedError>) throws -> Void) throws {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var fields: [String] = []
        var field: [UInt8] = []
        var inQuotes = false
        var afterQuote = false
        var line = 1
        var recordStart = 1
        var recordLength = 0
        var badRecord: String?
        var pendingCR = false

        func finishField() {
            if let s = String(validating: field, as: UTF8.self) {
                fields.append(s)
            } else {
                badRecord = badRecord ?? "invalid UTF-8 in field \(fields.count + 1)"
                fields.append("")
            }
            field.removeAll(keepingCapacity: true)
        }
        func finishRecord() throws {
            finishField()
            if let badRecord {
                try body(.failure(RecordLocatedError(line: recordStart, message: badRecord)))
            } else if !(fields.count == 1 && fields[0].isEmpty) {
                try body(.success(Record(line: recordStart, fields: fields)))
            }
            fields.removeAll(keepingCapacity: true)
            badRecord = nil
            afterQuote = false
            recordLength = 0
            recordStart = line
        }

        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            for byte in chunk {
                recordLength += 1
                if recordLength > maxRecordLength, badRecord == nil {
                    badRecord = "record longer than \(maxRecordLength) bytes"
                }
                if pendingCR {
                    pendingCR = false
                    if byte == UInt8(ascii: "\n") { continue }
                }
                if inQuotes {
                    if byte == UInt8(ascii: "\"") {
                        inQuotes = false
                        afterQuote = true
                    } else {
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
                case UInt8(ascii: "\r"), UInt8(ascii: "\n"):
                    line += 1
                    pendingCR = byte == UInt8(ascii: "\r")
                    try finishRecord()
                default:
                    if afterQuote {
                        badRecord = badRecord ?? "text after a closing quote in field \(fields.count + 1)"
                    }
                    if badRecord == nil { field.append(byte) }
                }
            }
        }
        if inQuotes {
            badRecord = "unterminated quoted field at end of file"
            try finishRecord()
        } else if !field.isEmpty || !fields.isEmpty {
            try finishRecord()
        }
    }
}

/// A record-level error with the line it starts on.
public struct RecordLocatedError: Error, Sendable {
    public var line: Int
    public var message: String
}
