import Foundation

/// Where and how to reach a PostgreSQL database: parsed from `postgres://user@host:port/db?schema=name`
/// (also `postgresql://`), with the password from a file, the environment or — discouraged — the URL.
///
/// The password is never part of ``description`` and is read only when connecting.
public struct PostgresSettings: Sendable, Hashable, CustomStringConvertible {
    /// Transport security.
    public enum TLSMode: String, Sendable, Hashable, CaseIterable {
        /// Plain TCP (a socket on the same host, a private network).
        case disable
        /// TLS without certificate checks (encrypts, does not authenticate the server).
        case require
        /// TLS with the server's certificate checked against the system roots and its host name.
        case verifyFull = "verify-full"
    }

    public var host: String
    public var port: Int
    public var database: String
    public var user: String
    /// A password written in the URL itself (prefer a file or the environment).
    public var urlPassword: String?
    /// A file whose first line is the password.
    public var passwordFile: URL?
    public var tls: TLSMode
    /// The schema the store's tables live in (`search_path`); `nil` uses the server's default.
    public var schema: String?

    public init(
        host: String, port: Int = 5432, database: String, user: String, urlPassword: String? = nil,
        passwordFile: URL? = nil, tls: TLSMode = .disable, schema: String? = nil
    ) {
        self.host = host
        self.port = port
        self.database = database
        self.user = user
        self.urlPassword = urlPassword
        self.passwordFile = passwordFile
        self.tls = tls
        self.schema = schema
    }

    /// Whether `text` is a PostgreSQL URL rather than a file path.
    public static func isURL(_ text: String) -> Bool {
        text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
    }

    /// An error in a PostgreSQL URL or its options.
    public struct InvalidURL: Error, Sendable, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }

    /// Parses a `postgres://` URL. Query options: `schema` (or `search_path`), `sslmode`
    /// (`disable`, `require`, `verify-full`).
    public static func parse(_ text: String) throws -> PostgresSettings {
        guard isURL(text), let components = URLComponents(string: text) else {
            throw InvalidURL(message: "not a postgres:// URL")
        }
        guard let host = components.host, !host.isEmpty else {
            throw InvalidURL(message: "the URL names no host")
        }
        let database = String(components.path.drop(while: { $0 == "/" }))
        guard !database.isEmpty else {
            throw InvalidURL(message: "the URL names no database (postgres://user@host/db)")
        }
        guard let user = components.user, !user.isEmpty else {
            throw InvalidURL(message: "the URL names no user (postgres://user@host/db)")
        }
        var settings = PostgresSettings(
            host: host, port: components.port ?? 5432, database: database, user: user,
            urlPassword: components.password)
        for item in components.queryItems ?? [] {
            switch item.name {
            case "schema", "search_path":
                guard let value = item.value, isIdentifier(value) else {
                    throw InvalidURL(message: "schema: expected a plain identifier like iapguard")
                }
                settings.schema = value
            case "sslmode":
                guard let value = item.value, let mode = TLSMode(rawValue: value) else {
                    throw InvalidURL(message: "sslmode: expected disable, require or verify-full")
                }
                settings.tls = mode
            default:
                throw InvalidURL(message: "unknown URL option '\(item.name)' (expected schema or sslmode)")
            }
        }
        return settings
    }

    /// A lower-case SQL identifier that needs no quoting (schema names are spliced into `SET search_path`).
    public static func isIdentifier(_ text: String) -> Bool {
        guard let first = text.unicodeScalars.first, text.count <= 63 else { return false }
        let lower = "abcdefghijklmnopqrstuvwxyz_"
        return lower.unicodeScalars.contains(first)
            && text.unicodeScalars.allSatisfy { lower.unicodeScalars.contains($0) || ("0"..."9").contains($0) }
    }

    /// The URL without its password.
    public var description: String {
        var text = "postgres://\(user)@\(host):\(port)/\(database)"
        var options: [String] = []
        if let schema { options.append("schema=\(schema)") }
        if tls != .disable { options.append("sslmode=\(tls.rawValue)") }
        if !options.isEmpty { text += "?" + options.joined(separator: "&") }
        return text
    }

    /// The password: the configured file's first line, else the URL's, else `IAPGUARD_PG_PASSWORD`, else
    /// `PGPASSWORD`; `nil` when none is set (trust or peer authentication).
    public func password(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> String? {
        if let passwordFile {
            let text: String
            do {
                text = try String(contentsOf: passwordFile, encoding: .utf8)
            } catch {
                throw InvalidURL(message: "cannot read the password file \(passwordFile.path)")
            }
            return String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
        }
        if let urlPassword { return urlPassword.removingPercentEncoding ?? urlPassword }
        if let value = environment["IAPGUARD_PG_PASSWORD"], !value.isEmpty { return value }
        if let value = environment["PGPASSWORD"], !value.isEmpty { return value }
        return nil
    }
}
