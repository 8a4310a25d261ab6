import ArgumentParser
import Foundation
import IAPGuard

/// `iapguard cases list|show|set-status`: the analyst's queue of cases and their triage state.
struct CasesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cases",
        abstract: "Work the queue of cases: one incident per case, with its findings and a triage state.",
        discussion: """
            The scheduled job builds the cases after its rules; their states survive every later run. The \
            config defaults to ./iapguard.yml when that file exists; --store names a SQLite store directly. \
            See docs/reports.md (the case model) and docs/operations.md (states across runs).

            Exit codes: 0 done; 3 no such case; 64 bad usage; 69 the store cannot be read or has no cases yet; \
            74 the store or the --html file cannot be written; 78 bad config.
            """,
        subcommands: [CasesListCommand.self, CasesShowCommand.self, CasesSetStatusCommand.self])
}

/// Where a cases command finds the store: `--config` (default ./iapguard.yml) or `--store`.
struct CaseStoreOptions: ParsableArguments {
    @Option(name: .long, help: "The config file (YAML). Default: ./iapguard.yml if present.")
    var config: String?

    @Option(name: .long, help: "The store (SQLite file); overrides the config's store.")
    var store: String?

    /// The loaded config, if any (exits 78 on a bad one).
    func loadConfig() -> Config? {
        let path =
            config ?? (store == nil && FileManager.default.fileExists(atPath: "iapguard.yml") ? "iapguard.yml" : nil)
        guard let path else { return nil }
        do {
            return try Config.load(from: URL(fileURLWithPath: path))
        } catch {
            CaseCommandFailure.exit("\(error)", ExitCodes.badConfig)
        }
    }

    /// Opens the store (read-only unless `writable`); exits 69 when it is missing or unreadable.
    func open(writable: Bool) -> (store: any SQLBackedStore, config: Config?) {
        let loaded = loadConfig()
        do {
            if store == nil, let postgres = loaded?.postgresStore {
                return (try PostgresStore(settings: postgres), loaded)
            }
            guard let path = store.map({ URL(fileURLWithPath: $0).path }) ?? loaded?.storePath.path else {
                CaseCommandFailure.exit(
                    "no store: pass --config FILE or --store PATH (or run where ./iapguard.yml is)", ExitCodes.usage)
            }
            guard FileManager.default.fileExists(atPath: path) else {
                CaseCommandFailure.exit(
                    "no store at \(path): nothing has run yet (run `iapguard run` first)", ExitCodes.sourceUnreachable)
            }
            return (try SQLiteStore(path: path, readOnly: !writable), loaded)
        } catch {
            CaseCommandFailure.exit("cannot open the store: \(error)", ExitCodes.sourceUnreachable)
        }
    }
}

/// Prints a message on stderr and exits with `code`.
enum CaseCommandFailure {
    static let notFound: Int32 = 3

    static func exit(_ message: String, _ code: Int32) -> Never {
        FileHandle.standardError.write(Data("iapguard cases: \(message)\n".utf8))
        Foundation.exit(code)
    }

    /// Maps a case error onto the exit codes (3 not found, 69 no cases yet, 64 bad argument).
    static func exit(_ error: Error) -> Never {
        switch error as? CaseError {
        case .notFound?: exit("\(error)", notFound)
        case .noCases?: exit("\(error)", ExitCodes.sourceUnreachable)
        case .invalid?: exit("\(error)", ExitCodes.usage)
        case nil: exit("\(error)", ExitCodes.sourceUnreachable)
        }
    }
}

struct CasesListCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List cases by priority: open first, then the highest level and the most money.")

    @OptionGroup var location: CaseStoreOptions

    @Option(
        name: .long, help: "Only cases in this state: open, investigating, confirmed-fraud, false-positive, resolved.")
    var status: String?

    @Option(name: .long, help: "Only cases of this level: informational, low, medium, high, critical.")
    var level: String?

    @Option(name: .long, help: "Only cases with a finding of this rule (e.g. IAP-011).")
    var rule: String?

    @Flag(name: .long, help: "Print JSON lines, one case per line (snake_case keys).")
    var json = false

    func validate() throws {
        if let status, CaseStatus(rawValue: status) == nil {
            throw ValidationError(
                "--status: expected one of \(CaseStatus.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if let level, Finding.Level(rawValue: level) == nil {
            throw ValidationError("--level: expected informational, low, medium, high or critical")
        }
    }

    func run() throws {
        let opened = location.open(writable: false)
        let filter = CaseReader.Filter(
            status: status.flatMap(CaseStatus.init), level: level.flatMap(Finding.Level.init), ruleID: rule)
        let cases: [IncidentCase]
        do {
            cases = try CaseReader(connection: opened.store.connection).list(filter)
        } catch {
            CaseCommandFailure.exit(error)
        }
        let currency = opened.config?.referenceCurrency ?? "USD"
        if json {
            let encoder = CaseDetail.jsonEncoder(pretty: false)
            for c in cases { print(String(decoding: try encoder.encode(c), as: UTF8.self)) }
            return
        }
        if cases.isEmpty {
            print("no cases match")
            return
        }
        for (index, c) in cases.enumerated() {
            let money = ReportFormat.money(milliunits: c.moneyAtRisk) + " " + currency
            print(
                "\(index + 1). \(c.caseID) \(c.level.rawValue.uppercased()) \(c.status.rawValue) \(money) "
                    + "[\(c.rules.joined(separator: ","))] \(CaseCommandText.clean(c.summary))")
        }
    }
}

struct CasesShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show", abstract: "Show one case: its findings, evidence, history and timeline.")

    @OptionGroup var location: CaseStoreOptions

    @Flag(name: .long, help: "Print the case as JSON.")
    var json = false

    @Option(name: .long, help: "Also write the case as one self-contained HTML page.")
    var html: String?

    @Argument(help: "The case id (C-…).")
    var caseID: String

    func validate() throws {
        if json && html != nil { throw ValidationError("--json and --html cannot be used together") }
    }

    func run() throws {
        let opened = location.open(writable: false)
        let detail: CaseDetail
        do {
            let parameters = LookupCommand.ruleParameters(config: opened.config)
            detail = try CaseDetail.load(
                caseID: caseID.trimmingCharacters(in: .whitespaces), store: opened.store,
                referenceCurrency: opened.config?.referenceCurrency ?? "USD",
                graceHours: parameters.graceHours ?? 24, renewalCreditShare: parameters.renewalCreditShare ?? 0.2)
        } catch {
            CaseCommandFailure.exit(error)
        }
        if json {
            print(try detail.json(), terminator: "")
            return
        }
        if let html {
            do {
                try Data(detail.html().utf8).write(to: URL(fileURLWithPath: html))
            } catch {
                CaseCommandFailure.exit("cannot write \(html): \(error.localizedDescription)", ExitCodes.ioError)
            }
            FileHandle.standardError.write(Data("iapguard cases: wrote \(html)\n".utf8))
        }
        print(detail.text(), terminator: "")
    }
}

struct CasesSetStatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "set-status",
        abstract: "Set a case's triage state, with who and a note; the change is added to its history.")

    @OptionGroup var location: CaseStoreOptions

    @Option(name: .long, help: "open, investigating, confirmed-fraud, false-positive or resolved.")
    var status: String

    @Option(name: .long, help: "Why (kept in the history).")
    var note: String?

    @Option(name: .long, help: "Who decided. Default: $USER (else $LOGNAME, else uid:N).")
    var by: String?

    @Argument(help: "The case id (C-…).")
    var caseID: String

    func validate() throws {
        guard CaseStatus(rawValue: status) != nil else {
            throw ValidationError(
                "--status: expected one of \(CaseStatus.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    func run() throws {
        let opened = location.open(writable: true)
        let environment = ProcessInfo.processInfo.environment
        let name = by ?? environment["USER"] ?? environment["LOGNAME"] ?? "uid:\(getuid())"
        do {
            let updated = try CaseTriage(connection: opened.store.connection).setStatus(
                caseID.trimmingCharacters(in: .whitespaces), to: CaseStatus(rawValue: status) ?? .open, by: name,
                note: note, at: Clock.nowMillis())
            print("\(updated.caseID): \(updated.status.rawValue) (by \(CaseCommandText.clean(updated.statusBy)))")
        } catch let error as CaseError {
            CaseCommandFailure.exit(error)
        } catch {
            CaseCommandFailure.exit("cannot write the store: \(error)", ExitCodes.ioError)
        }
    }
}

/// Terminal-safe text: control, bidi and invisible characters shown as `⟦U+XXXX⟧`.
enum CaseCommandText {
    static func clean(_ text: String) -> String { LookupTextRenderer.clean(text) }
}
