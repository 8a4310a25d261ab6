import ArgumentParser
import Foundation
import IAPGuard

/// `iapguard rules list | validate | test | backtest`: work with the rule files.
struct RulesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rules",
        abstract: "List, validate, test and backtest the fraud rules (YAML files in the rules folder).",
        subcommands: [List.self, Validate.self, Test.self, Backtest.self]
    )

    /// Options shared by the subcommands.
    struct Options: ParsableArguments {
        @Option(name: .long, help: "The rules folder (default: the config's `rules`, else ./rules).")
        var rules: String?

        @Option(name: .long, help: "The config file: its `rules`, `reference_currency` and `rule_params` are used.")
        var config: String?

        @Option(
            name: .long,
            help:
                "validate: also plan every query on this PostgreSQL database (postgres://user@host/db; default: the config's store when it is one)."
        )
        var postgres: String?

        /// The rules folder and the config, if one was given.
        func resolve() throws -> (folder: URL, config: Config?) {
            let loaded = try RulesCommand.loadConfig(config)
            if let rules { return (URL(fileURLWithPath: rules), loaded) }
            return (loaded?.rulesDirectory ?? URL(fileURLWithPath: "rules"), loaded)
        }
    }

    /// Loads `path` with the full config loader; a bad config exits with the config code.
    static func loadConfig(_ path: String?) throws -> Config? {
        guard let path else { return nil }
        do {
            return try Config.load(from: URL(fileURLWithPath: path))
        } catch let error as ConfigError {
            FileHandle.standardError.write(Data("iapguard: \(error)\n".utf8))
            throw ExitCode(ExitCodes.badConfig)
        }
    }

    static func printLoadErrors(_ errors: [RuleLoadError]) {
        for error in errors {
            FileHandle.standardError.write(Data("\(error.file):\(error.line): error: \(error.message)\n".utf8))
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the rules with their level and status.")
        @OptionGroup var options: Options

        func run() throws {
            let (folder, _) = try options.resolve()
            let (rules, errors) = RuleSet.load(from: folder)
            for rule in rules {
                print(
                    [
                        rule.id, rule.level.rawValue, rule.status.rawValue, "v\(rule.version)",
                        "\(rule.tests.count) tests", rule.title,
                    ]
                    .joined(separator: "\t"))
            }
            printLoadErrors(errors)
            print("\(rules.count) rules loaded, \(errors.count) failed to load")
            if !errors.isEmpty { throw ExitCode(1) }
        }
    }

    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Load every rule and prepare its SQL against the real schema; report file:line problems.")
        @OptionGroup var options: Options

        func run() throws {
            let (folder, config) = try options.resolve()
            let (rules, errors) = RuleSet.load(from: folder)
            printLoadErrors(errors)
            let postgres = try options.postgres.map(PostgresSettings.parse) ?? config?.postgresStore
            let issues = try RuleValidator(paramOverrides: config?.ruleParams ?? [:], postgres: postgres)
                .validate(rules, now: Int64(Date().timeIntervalSince1970 * 1000))
            if let postgres { print("checked against PostgreSQL: \(postgres)") }
            for issue in issues { print(issue) }
            let errorCount = errors.count + issues.filter { $0.severity == .error }.count
            let warningCount = issues.filter { $0.severity == .warning }.count
            print("\(rules.count) rules loaded, \(errorCount) errors, \(warningCount) warnings")
            if errorCount > 0 { throw ExitCode(1) }
        }
    }

    struct Test: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run every rule's inline tests (fixtures in, expected hits out).")
        @OptionGroup var options: Options

        @Option(name: .long, help: "Only the rule with this id.")
        var rule: String?

        @Flag(name: .long, help: "Print passing tests too.")
        var verbose = false

        func run() throws {
            let (folder, config) = try options.resolve()
            var (rules, errors) = RuleSet.load(from: folder)
            printLoadErrors(errors)
            if let rule { rules = rules.filter { $0.id == rule } }
            let results = RuleTester(referenceCurrency: config?.referenceCurrency ?? "USD").run(rules)
            for result in results where verbose || !result.passed { print(result) }
            let failed = results.filter { !$0.passed }.count
            print("\(results.count) tests in \(rules.count) rules: \(results.count - failed) passed, \(failed) failed")
            if failed > 0 || !errors.isEmpty { throw ExitCode(1) }
        }
    }

    struct Backtest: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compare what a candidate rule set flags on stored history with the current (baseline) rules.")

        @Option(name: .long, help: "The candidate rules folder.")
        var rules: String

        @Option(
            name: .long, help: "The config file: its store, rules (the baseline), reference currency and rule_params.")
        var config: String?

        @Option(name: .long, help: "The baseline (current) rules folder (default: the config's `rules`).")
        var baseline: String?

        @Option(name: .long, help: "The store (SQLite file), opened read-only (default: the config's `store`).")
        var store: String?

        @Option(name: .long, help: "Window start: YYYY-MM-DD, RFC 3339 or epoch ms.")
        var since: String

        @Option(name: .long, help: "Window end (bound as :now): YYYY-MM-DD, RFC 3339 or epoch ms.")
        var until: String

        @Option(name: .long, help: "Reference currency for money at risk (default: the config's, else USD).")
        var referenceCurrency: String?

        @Option(name: .long, help: "How many new/gone hits to list per rule.")
        var show = 10

        func validate() throws {
            guard EpochTime.parse(since) != nil else { throw ValidationError("--since: not a time: \(since)") }
            guard EpochTime.parse(until) != nil else { throw ValidationError("--until: not a time: \(until)") }
            if config == nil {
                guard store != nil else { throw ValidationError("--store (or --config) is required") }
                guard baseline != nil else { throw ValidationError("--baseline (or --config) is required") }
            }
        }

        func run() throws {
            let loaded = try RulesCommand.loadConfig(config)
            guard let baselinePath = baseline ?? loaded?.rulesDirectory?.path else {
                throw ValidationError("--baseline: the config names no rules folder")
            }
            // A PostgreSQL store comes from the config; `--store` names a SQLite file (opened read-only).
            guard let location = StoreLocation.resolve(storeOption: store, config: loaded), location.exists else {
                throw ValidationError("--store: no such file: \(store ?? loaded?.storePath.path ?? "")")
            }
            let candidate = RuleSet.load(from: URL(fileURLWithPath: rules))
            let current = RuleSet.load(from: URL(fileURLWithPath: baselinePath))
            printLoadErrors(candidate.errors + current.errors)
            let opened = try location.open(readOnly: true)
            let rows = try RuleBacktest(
                store: opened, referenceCurrency: referenceCurrency ?? loaded?.referenceCurrency ?? "USD",
                paramOverrides: loaded?.ruleParams ?? [:]
            )
            .compare(
                candidate: candidate.rules, baseline: current.rules, since: EpochTime.parse(since) ?? 0,
                until: EpochTime.parse(until) ?? 0)
            print(["rule", "baseline", "candidate", "new", "gone", "unchanged"].joined(separator: "\t"))
            for row in rows {
                print(
                    [
                        row.ruleID, "\(row.baselineHits)", "\(row.candidateHits)", "\(row.new.count)",
                        "\(row.gone.count)", "\(row.unchanged)",
                    ].joined(separator: "\t"))
                for f in row.new.prefix(show) { print("  + \(f.findingID) \(key(f)) \(f.summary)") }
                for f in row.gone.prefix(show) { print("  - \(f.findingID) \(key(f)) \(f.summary)") }
                for e in row.errors { print("  ! \(e)") }
            }
            if !candidate.errors.isEmpty || !current.errors.isEmpty { throw ExitCode(1) }
        }

        private func key(_ f: Finding) -> String {
            f.entityKey.map { "\($0.name)=\($0.value ?? "NULL")" }.joined(separator: ",")
        }
    }
}
