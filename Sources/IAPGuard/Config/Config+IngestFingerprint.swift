import Foundation

extension Config {
    /// A hash of what ingest reads from a config: the `sources:` entries as written, the trusted roots (each
    /// file's path and bytes) and whether Apple's root is trusted, and each app's bundle id, Apple id and
    /// environments (what verification checks a record against). The rest of the config (rules, their
    /// parameters, reports, the catalog's products and prices, testers, FX, windows) changes what the rules
    /// make of the stored records, never the records: editing it leaves the next run skipping unchanged
    /// input files instead of reading them all again.
    static func ingestFingerprint(sources: Any?, trust: [URL], trustAppleRoot: Bool, apps: [App]) -> String {
        var text = "sources=" + canonical(sources) + "\n"
        text += "trust_apple_root=\(trustAppleRoot)\n"
        for root in trust {
            text += "trust=" + canonical(root.path) + ":" + rootDigest(root) + "\n"
        }
        for app in apps {
            text +=
                "app=" + canonical(app.bundleID) + "," + (app.appAppleID.map(String.init) ?? "-") + ","
                + app.environments.map(\.rawValue).sorted().joined(separator: "|") + "\n"
        }
        return Hashing.sha256Hex(text)
    }

    /// The SHA-256 of a trusted root's bytes, read only from a regular file of at most 1 MiB (a certificate
    /// is a few KiB; a device or a pipe named by mistake is never read here). Anything else, or a file that
    /// cannot be read, is its kind alone: the verifier's set-up reports it.
    static func rootDigest(_ root: URL) -> String {
        var info = stat()
        guard stat(root.path, &info) == 0 else { return "missing" }
        guard info.st_mode & S_IFMT == S_IFREG, info.st_size <= 1 << 20 else { return "not-a-certificate-file" }
        return (try? Data(contentsOf: root)).map { Hashing.sha256Hex($0) } ?? "unreadable"
    }

    /// `value` (a parsed YAML value) as text that differs whenever the value does: mappings by sorted key,
    /// strings quoted and escaped, each scalar with its type.
    static func canonical(_ value: Any?) -> String {
        switch value {
        case nil: return "~"
        case let map as [String: Any]:
            return "{" + map.keys.sorted().map { canonical($0) + ":" + canonical(map[$0]) }.joined(separator: ",") + "}"
        case let list as [Any]:
            return "[" + list.map { canonical($0) }.joined(separator: ",") + "]"
        case let text as String:
            return "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                + "\""
        case let flag as Bool: return flag ? "true" : "false"
        case let number as Int: return "i" + String(number)
        case let number as Double: return "d" + String(number)
        case let other?: return "?" + String(describing: type(of: other)) + ":" + String(describing: other)
        }
    }
}
