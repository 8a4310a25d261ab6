/// A problem with the config file, naming the key (and file) at fault.
public struct ConfigError: Error, Sendable, CustomStringConvertible {
    public let file: String
    public let key: String?
    public let message: String

    public init(file: String, key: String?, message: String) {
        self.file = file
        self.key = key
        self.message = message
    }

    public var description: String {
        if let key { return "\(file): \(key): \(message)" }
        return "\(file): \(message)"
    }
}
