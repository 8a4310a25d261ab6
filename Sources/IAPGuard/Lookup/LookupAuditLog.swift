import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The append-only audit log of lookups: one JSON line per lookup saying who looked up what, when, how it
/// was resolved and what was answered. It holds no secrets: no config values, no tokens beyond the id asked.
/// Default path: next to the store, `<store>.lookup-audit.jsonl`.
public struct LookupAuditLog: Sendable {
    /// One line of the log.
    public struct Entry: Sendable, Hashable, Codable {
        /// RFC 3339 UTC.
        public var at: String
        /// `$USER` (or `$LOGNAME`), else `uid:N`.
        public var user: String
        public var uid: Int
        /// The id that was looked up, as given (JSON-escaped in the file).
        public var id: String
        /// The kind pinned with `--kind`, if any.
        public var kind: String?
        public var kindsMatched: [String]
        public var found: Bool
        /// The verdict codes answered.
        public var verdicts: [String]
        /// `text`, `json` or `html`.
        public var output: String
        public var store: String
        public var customerConsented: Bool
        public var exitCode: Int32
    }

    public let path: URL

    public init(path: URL) { self.path = path }

    /// The default log path for a store.
    public static func defaultPath(forStore store: URL) -> URL {
        store.deletingLastPathComponent().appendingPathComponent(store.lastPathComponent + ".lookup-audit.jsonl")
    }

    /// The invoking user: `$USER`, else `$LOGNAME`, else `uid:N`.
    public static func currentUser() -> (name: String, uid: Int) {
        let uid = Int(getuid())
        let environment = ProcessInfo.processInfo.environment
        let name = [environment["USER"], environment["LOGNAME"]].compactMap { $0 }.first { !$0.isEmpty }
        return (name ?? "uid:\(uid)", uid)
    }

    /// An entry for a finished lookup.
    public static func entry(
        for result: LookupResult, output: String, store: String, exitCode: Int32, customerConsented: Bool,
        at: Int64 = Clock.nowMillis()
    ) -> Entry {
        let user = currentUser()
        return Entry(
            at: StorefrontTime.utc(at), user: user.name, uid: user.uid, id: result.query.id,
            kind: result.query.kind?.rawValue, kindsMatched: result.query.matches.map(\.kind.rawValue),
            found: result.found, verdicts: result.verdicts.map(\.code.rawValue), output: output, store: store,
            customerConsented: customerConsented, exitCode: exitCode)
    }

    /// Appends one line (created with mode 0600 if missing). Throws ``LookupError/auditLog(_:)``.
    public func append(_ entry: Entry) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        var line: Data
        do {
            line = try encoder.encode(entry)
        } catch {
            throw LookupError.auditLog("cannot encode the entry: \(error)")
        }
        line.append(0x0A)
        let fd = open(path.path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw LookupError.auditLog("\(path.path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        let written = line.withUnsafeBytes { buffer in write(fd, buffer.baseAddress, buffer.count) }
        guard written == line.count else {
            throw LookupError.auditLog("\(path.path): short write")
        }
    }

    /// All entries in the log (for tests and reviews).
    public func entries() throws -> [Entry] {
        guard let data = FileManager.default.contents(atPath: path.path) else { return [] }
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return try data.split(separator: 0x0A).map { try decoder.decode(Entry.self, from: Data($0)) }
    }
}
