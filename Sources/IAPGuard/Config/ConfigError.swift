/// A problem with the config file, naming the file, the line (when the key can be found in it) and the
/// key at fault.
public struct ConfigError: Error, Sendable, CustomStringConvertible {
    public let file: String
    public let key: String?
    public let message: String
    /// The 1-based line of the key (or of the deepest part of its path that exists), when known.
    public var line: Int?

    public init(file: String, key: String?, message: String, line: Int? = nil) {
        self.file = file
        self.key = key
        self.message = message
        self.line = line
    }

    public var description: String {
        let location = line.map { "\(file):\($0)" } ?? file
        if let key { return "\(location): \(key): \(message)" }
        return "\(location): \(message)"
    }
}
