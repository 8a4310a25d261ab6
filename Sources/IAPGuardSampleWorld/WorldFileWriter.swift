import Foundation

/// Appends text to one output file through a bounded buffer, so the generator's memory does not grow
/// with the size of the world.
final class WorldFileWriter {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private let flushThreshold = 1 << 16
    /// Lines written so far.
    private(set) var lines = 0

    /// Creates (or truncates) the file at `url`.
    init(url: URL) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
        }
        handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: 0)
        buffer.reserveCapacity(flushThreshold * 2)
    }

    /// Writes `text` followed by a line feed.
    func writeLine(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        buffer.append(0x0A)
        lines += 1
        if buffer.count >= flushThreshold { try flush() }
    }

    /// Writes `text` with CRLF (RFC 4180 line ending).
    func writeCSVLine(_ text: String) throws {
        buffer.append(contentsOf: text.utf8)
        buffer.append(0x0D)
        buffer.append(0x0A)
        lines += 1
        if buffer.count >= flushThreshold { try flush() }
    }

    /// Pushes the buffer to disk.
    func flush() throws {
        guard !buffer.isEmpty else { return }
        try handle.write(contentsOf: Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }

    /// Flushes and closes the file.
    func close() throws {
        try flush()
        try handle.close()
    }
}
