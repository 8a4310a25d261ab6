import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Loads the App Store Connect API key (`AuthKey_XXXXXXXXXX.p8`: a PKCS#8 PEM P-256 private key).
///
/// The key comes from a file path or from a systemd credential (`LoadCredential=NAME:/path` puts it in
/// `$CREDENTIALS_DIRECTORY/NAME`). A file readable by its group or by others is refused. Error messages
/// name the file and the problem, never its content.
public enum AppStoreKeyFile {
    /// Why the key could not be loaded.
    public struct KeyError: Error, Sendable, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// Where the key is.
    public enum Location: Sendable, Hashable {
        case path(URL)
        /// A systemd credential name, resolved in `$CREDENTIALS_DIRECTORY`.
        case credential(String)

        /// The file this location names, given the process environment.
        public func resolve(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> URL {
            switch self {
            case .path(let url):
                return url
            case .credential(let name):
                guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
                    throw KeyError(message: "key_credential '\(name)' is not a plain credential name")
                }
                guard let directory = environment["CREDENTIALS_DIRECTORY"], !directory.isEmpty else {
                    throw KeyError(
                        message:
                            "key_credential '\(name)': $CREDENTIALS_DIRECTORY is not set (run under systemd with LoadCredential=\(name):…)"
                    )
                }
                return URL(fileURLWithPath: directory).appendingPathComponent(name)
            }
        }
    }

    /// Reads and parses the key at `location`, refusing a file readable by group or others.
    public static func load(
        _ location: Location, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> P256.Signing.PrivateKey {
        let url = try location.resolve(environment: environment)
        var info = stat()
        guard stat(url.path, &info) == 0 else {
            throw KeyError(message: "\(url.path): cannot read the API key file (\(String(cString: strerror(errno))))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw KeyError(message: "\(url.path): the API key is not a regular file")
        }
        let loose = info.st_mode & (S_IRGRP | S_IROTH)
        guard loose == 0 else {
            throw KeyError(
                message:
                    "\(url.path): the API key file is readable by \((info.st_mode & S_IROTH) != 0 ? "others" : "its group") (mode \(String(info.st_mode & 0o777, radix: 8))); chmod 600 it"
            )
        }
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw KeyError(message: "\(url.path): cannot read the API key file")
        }
        return try parse(data, name: url.path)
    }

    /// Parses PKCS#8 PEM text (the `.p8` format) into a P-256 signing key.
    static func parse(_ data: Data, name: String) throws -> P256.Signing.PrivateKey {
        guard let text = String(data: data, encoding: .utf8) else {
            throw KeyError(message: "\(name): the API key is not PEM text")
        }
        do {
            return try P256.Signing.PrivateKey(pemRepresentation: text)
        } catch {
            // The underlying error may quote bytes of the key: report only that parsing failed.
            throw KeyError(message: "\(name): not a PKCS#8 PEM P-256 private key (an App Store Connect .p8 file)")
        }
    }
}
