import Foundation

/// Loading a rules folder: every `*.yaml` / `*.yml` file is one rule. A malformed file is reported with
/// its file and line, and every other rule still loads.
public enum RuleSet {
    /// Loads every rule file in `folder` (not recursive), in file-name order.
    ///
    /// Returns the rules that loaded and one error per file that did not (a duplicate id is an error on the
    /// second file). A missing folder is one error. Without `includingTests`, the inline tests are neither
    /// parsed nor checked (a run needs only the queries).
    public static func load(from folder: URL, includingTests: Bool = true) -> (rules: [Rule], errors: [RuleLoadError]) {
        let files: [URL]
        do {
            files = try FileManager.default.contentsOfDirectory(
                at: folder, includingPropertiesForKeys: nil, options: [.skipsHiddenFiles]
            )
            .filter { ["yaml", "yml"].contains($0.pathExtension.lowercased()) }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
        } catch {
            return (
                [],
                [
                    RuleLoadError(
                        file: folder.path, line: 0, message: "cannot read rules folder: \(error.localizedDescription)")
                ]
            )
        }
        var rules: [Rule] = []
        var errors: [RuleLoadError] = []
        var seen: [String: String] = [:]
        for file in files {
            switch load(file: file, includingTests: includingTests) {
            case .success(let rule):
                if let first = seen[rule.id] {
                    errors.append(
                        RuleLoadError(
                            file: file.path, line: rule.line(of: "id"),
                            message: "duplicate rule id \(rule.id) (first in \(first))"))
                } else {
                    seen[rule.id] = file.path
                    rules.append(rule)
                }
            case .failure(let error):
                errors.append(error)
            }
        }
        return (rules, errors)
    }

    /// Loads one rule file (its inline tests too unless `includingTests` is false).
    public static func load(file: URL, includingTests: Bool = true) -> Result<Rule, RuleLoadError> {
        let text: String
        do {
            let data = try Data(contentsOf: file)
            guard let decoded = String(data: data, encoding: .utf8) else {
                return .failure(RuleLoadError(file: file.path, line: 1, message: "not valid UTF-8"))
            }
            text = decoded
        } catch {
            return .failure(
                RuleLoadError(file: file.path, line: 0, message: "cannot read: \(error.localizedDescription)"))
        }
        do {
            var parser = RuleParser(file: file.path)
            parser.includesTests = includingTests
            return .success(try parser.parse(text))
        } catch {
            return .failure(error)
        }
    }
}
