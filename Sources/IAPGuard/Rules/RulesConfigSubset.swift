import Foundation
import Yams

/// The few config keys the rules commands need (`rules`, `reference_currency`, `rule_params`, and a
/// PostgreSQL `store` with its `store_password_file` and `store_tls`), read without
/// the full config loader; relative paths resolve against the config file's folder.
public struct RulesConfigSubset: Sendable {
    public init() {}

    public var rulesFolder: URL?
    public var referenceCurrency: String?
    public var ruleParams: [String: [String: SQLValue]] = [:]
    /// The PostgreSQL store, when the config's `store` is a `postgres://` URL.
    public var postgres: PostgresSettings?

    /// Reads the keys from the config file at `path`.
    public static func load(path: String) throws -> RulesConfigSubset {
        let url = URL(fileURLWithPath: path)
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else {
            throw RuleEngineError(message: "--config: cannot read \(path)")
        }
        guard case .mapping(let root)? = try Yams.compose(yaml: text) else {
            throw RuleEngineError(message: "--config: \(path) is not a YAML mapping")
        }
        var subset = RulesConfigSubset()
        for (key, value) in root {
            switch key.string {
            case "rules":
                if let folder = value.string {
                    subset.rulesFolder =
                        URL(fileURLWithPath: folder, relativeTo: url.deletingLastPathComponent()).standardizedFileURL
                }
            case "reference_currency": subset.referenceCurrency = value.string
            case "rule_params":
                guard case .mapping(let rules) = value else {
                    throw RuleEngineError(message: "--config: rule_params must be a mapping")
                }
                for (ruleKey, params) in rules {
                    guard let ruleID = ruleKey.string, case .mapping(let entries) = params else {
                        throw RuleEngineError(
                            message: "--config: rule_params.\(ruleKey.string ?? "?") must be a mapping")
                    }
                    var values: [String: SQLValue] = [:]
                    for (name, v) in entries {
                        guard let name = name.string else { continue }
                        switch Tag.Name(rawValue: v.tag.rawValue) {
                        case .int: values[name] = v.int.map { .integer(Int64($0)) } ?? .text(v.string ?? "")
                        case .float: values[name] = v.float.map(SQLValue.real) ?? .text(v.string ?? "")
                        case .bool: values[name] = .integer(v.bool == true ? 1 : 0)
                        case .null: values[name] = .null
                        default: values[name] = .text(v.string ?? "")
                        }
                    }
                    subset.ruleParams[ruleID] = values
                }
            default: continue
            }
        }
        if let store = root["store"]?.string, PostgresSettings.isURL(store) {
            do {
                var settings = try PostgresSettings.parse(store)
                if let file = root["store_password_file"]?.string {
                    settings.passwordFile =
                        URL(fileURLWithPath: file, relativeTo: url.deletingLastPathComponent()).standardizedFileURL
                }
                if let tls = root["store_tls"]?.string {
                    guard let mode = PostgresSettings.TLSMode(rawValue: tls) else {
                        throw RuleEngineError(message: "--config: store_tls: expected disable, require or verify-full")
                    }
                    settings.tls = mode
                }
                subset.postgres = settings
            } catch let error as PostgresSettings.InvalidURL {
                throw RuleEngineError(message: "--config: store: \(error.message)")
            }
        }
        return subset
    }
}
