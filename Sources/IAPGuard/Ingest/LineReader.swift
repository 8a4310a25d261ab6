import Foundation

/// Reads a file line by line in fixed-size chunks, so memory does not grow with file size.
///
/// Lines longer than `maxLineLength` are not buffered: they are skipped to the next newline and reported
/// as oversize. A trailing `\r` is removed (CRLF files), and so is a UTF-8 byte order mark at the start
/// of the file.
public struct LineReader {
    /// One line handed to the caller.
    public enum Line {
        case text(number: Int, bytes: ArraySlice<UInt8>)
        case oversize(number: Int, length: Int, head: [UInt8])
    }

    public let url: URL
    public let maxLineLength: Int
    public let chunkSize: Int
    /// Byte offset to start reading at (the start of a line), and that line's number: reading only what
    /// was appended to a file.
    public var startOffset: UInt64 = 0
    public var firstLineNumber = 1

    public init(url: URL, maxLineLength: Int = 8 << 20, chunkSize: Int = 1 << 20) {
        self.url = url
        self.maxLineLength = maxLineLength
        self.chunkSize = chunkSize
    }

    /// Calls `body` for every line, in order. Line numbers start at 1.
    public func forEachLine(_ body: (Line) throws -> Void) throws {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(chunkSize * 2)
        var lineNumber = firstLineNumber
        if startOffset > 0 { try handle.seek(toOffset: startOffset) }
        var skipping = false
        var skippedLength = 0
        var skippedHead: [UInt8] = []
        var atFileStart = startOffset == 0

        func emit(_ slice: ArraySlice<UInt8>) throws {
            var line = slice
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            try body(.text(number: lineNumber, bytes: line))
        }

        while true {
            let chunk = try handle.read(upToCount: chunkSize) ?? Data()
            let atEnd = chunk.isEmpty
            buffer.append(contentsOf: chunk)
            if atFileStart, buffer.count >= 3 || atEnd {
                atFileStart = false
                if buffer.starts(with: CSVReader.byteOrderMark) { buffer.removeFirst(3) }
            }
            var start = buffer.startIndex
            // Line breaks are found with memchr (vectorised by the C library): this loop runs on the thread
            // that feeds the parsers, so its speed bounds the whole ingest.
            while let index = Self.lineBreak(in: buffer, from: start) {
                if skipping {
                    skippedLength += index - start
                    try body(.oversize(number: lineNumber, length: skippedLength, head: skippedHead))
                    skipping = false
                    skippedLength = 0
                    skippedHead = []
                } else {
                    try emit(buffer[start..<index])
                }
                lineNumber += 1
                start = index + 1
            }
            buffer.removeSubrange(buffer.startIndex..<start)
            if skipping {
                skippedLength += buffer.count
                buffer.removeAll(keepingCapacity: true)
            } else if buffer.count > maxLineLength {
                skipping = true
                skippedLength = buffer.count
                skippedHead = Array(buffer.prefix(256))
                buffer.removeAll(keepingCapacity: true)
            }
            if atEnd { break }
        }
        if skipping {
            try body(.oversize(number: lineNumber, length: skippedLength, head: skippedHead))
        } else if !buffer.isEmpty {
            try emit(buffer[...])
        }
    }

    /// The index of the first `\n` in `buffer` at or after `start`, or nil.
    static func lineBreak(in buffer: [UInt8], from start: Int) -> Int? {
        guard start < buffer.count else { return nil }
        return buffer.withUnsafeBufferPointer { raw -> Int? in
            guard let base = raw.baseAddress, let hit = memchr(base + start, 0x0A, raw.count - start) else {
                return nil
            }
            return base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
        }
    }
}
