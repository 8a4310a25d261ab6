import Foundation
import IAPGuard

/// Runs the Python side-by-side scripts of `Benchmarks/Scripts/` and reads their JSON lines.
enum PythonSideBySide {
    /// `side_by_side.py` (or `script`) with `arguments`; one JSON object per line of its stdout.
    static func run(_ options: BenchOptions, _ arguments: [String], script: String = "side_by_side.py") throws
        -> [[String: Any]]
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [options.python, BenchOptions.scriptsDirectory.appendingPathComponent(script).path] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError("\(script) \(arguments.first ?? "") exited with \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap {
            (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
        }
    }

    /// Fails with the install command when `options.python` cannot import every module in `modules`.
    static func requireModules(_ options: BenchOptions, _ modules: [String], for purpose: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [options.python, "-c", "import " + modules.joined(separator: ", ")]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw BenchError("\(purpose) needs \(options.python): \(error)")
        }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError(
                "\(purpose) needs the Python modules \(modules.joined(separator: ", ")) in \(options.python): "
                    + "pip install duckdb orjson cryptography pyyaml (or pass --python PYTHON)")
        }
    }

    /// Writes `rules` as the JSON the scripts read (`[{"id", "sql", "params"}]`), every parameter bound as
    /// iapguard binds it for a full run at the world's `now` (defaults, the config's `rule_params`).
    static func writeRules(_ rules: [Rule], config: Config, to file: URL) throws {
        var list: [[String: Any]] = []
        for rule in rules {
            let bound = rule.boundParameters(
                overrides: config.ruleParams[rule.id] ?? [:], now: BenchWorld.now, since: 0,
                referenceCurrency: config.referenceCurrency)
            var params: [String: Any] = [:]
            for (name, value) in bound {
                switch value {
                case .integer(let n): params[name] = n
                case .real(let d): params[name] = d
                case .text(let t): params[name] = t
                default: params[name] = NSNull()
                }
            }
            list.append(["id": rule.id, "sql": rule.query, "params": params])
        }
        try JSONSerialization.data(withJSONObject: list, options: [.prettyPrinted]).write(to: file)
    }
}
