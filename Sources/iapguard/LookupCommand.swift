import ArgumentParser
import Foundation
import IAPGuard
import Logging

/// `iapguard lookup ID`: answers a support question from the store, read-only, and logs the lookup.
struct LookupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "lookup",
        abstract: "Answer a support claim by id: verdict, evidence, timeline and findings (read-only).",
        discussion: """
            ID is a transaction ID, original transaction ID, order ID (the backend's), Apple order ID (from the \
            receipt e-mail; needs the App Store Server API), user ID, app account token or app transaction ID \
            (the Apple Account, Apple's appTransactionId). Without --kind every \
            kind is tried and the answer says which matched.

            The config defaults to ./iapguard.yml when that file exists; --store reads a store directly. The \
            store is opened read-only and never changed. Every lookup is appended to the audit log \
            (<store>.lookup-audit.jsonl unless --audit-log is given); if the log cannot be written, the lookup \
            is refused. See docs/support.md.

            Exit codes: 0 found; 3 not found; 64 bad usage; 69 the store cannot be read; 74 the audit log or \
            the --html file cannot be written; 78 bad config.
            """)

    @Option(name: .long, help: "The config file (YAML). Default: ./iapguard.yml if present.")
    var config: String?

    @Option(name: .long, help: "The store (SQLite file); overrides the config's store.")
    var store: String?

    @Flag(name: .long, help: "Print the answer as JSON (schema in docs/support.md).")
    var json = false

    @Option(name: .long, help: "Also write the answer as an HTML page to attach to a case.")
    var html: String?

    @Option(
        name: .long,
        help: "Only try this kind of id: transaction, original, order, apple-order, user, token or app-transaction-id.")
    var kind: String?

    @Flag(
        name: .long, help: "The customer consented to share consumption data with Apple (enables consumption drafts).")
    var customerConsented = false

    @Option(name: .long, help: "The audit log (JSON lines). Default: <store>.lookup-audit.jsonl.")
    var auditLog: String?

    @Option(name: .long, help: "Judge as of this time (RFC 3339). Default: the last run's --until, else now.")
    var at: String?

    @Argument(help: "The id to look up.")
    var id: String

    func validate() throws {
        if json && html != nil { throw ValidationError("--json and --html cannot be used together") }
        if let kind, IDKind(rawValue: kind) == nil {
            throw ValidationError(
                "--kind: expected one of \(IDKind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
    }

    func run() throws {
        let query: LookupQuery
        do {
            query = try LookupQuery(
                id: id, kind: kind.flatMap(IDKind.init(rawValue:)), customerConsented: customerConsented)
        } catch let error as LookupError {
            throw ValidationError(error.description)
        }
        var judgeAt: Int64?
        if let at {
            guard let ms = TimeParser.epochMillis(at) else { throw ValidationError("--at: expected an RFC 3339 time") }
            judgeAt = ms
        }

        // Config: explicit, else ./iapguard.yml when present (and no --store).
        var loaded: Config?
        let configPath =
            config ?? (store == nil && FileManager.default.fileExists(atPath: "iapguard.yml") ? "iapguard.yml" : nil)
        if let configPath {
            do {
                loaded = try Config.load(from: URL(fileURLWithPath: configPath))
            } catch let error as ConfigError {
                fail("\(error)", LookupExitCode.badConfig)
            }
        }
        // A PostgreSQL store (from the config) is read over its connection; the audit log then sits beside
        // the config file. `--store` always names a SQLite file.
        guard let location = StoreLocation.resolve(storeOption: store, config: loaded) else {
            throw ValidationError("no store: pass --config FILE or --store PATH (or run where ./iapguard.yml is)")
        }
        let storePath: URL
        switch location {
        case .sqlite(let path): storePath = URL(fileURLWithPath: path)
        case .postgres:
            storePath = (loaded?.file.deletingLastPathComponent() ?? URL(fileURLWithPath: ".")).appendingPathComponent(
                "iapguard")
        }
        guard location.exists else {
            fail(
                "no store at \(location.displayName): nothing has been pulled yet (run `iapguard run` first)",
                .storeUnavailable)
        }

        // Apple order ids go to the App Store Server API when the config has an `app_store_api` source.
        var orderLookup: AppStoreOrderLookupAdapter?
        if let loaded, !loaded.appStoreAPI.isEmpty {
            do {
                orderLookup = AppStoreOrderLookupAdapter(
                    config: loaded, verifier: try JWSVerifier.make(for: loaded),
                    logger: Logger(label: "iapguard.lookup"))
            } catch {
                fail("\(error)", LookupExitCode.badConfig)
            }
        }

        let result: LookupResult
        do {
            let opened = try location.open(readOnly: true)
            var service = LookupService(
                store: opened, referenceCurrency: loaded?.referenceCurrency ?? "USD", appleOrderLookup: orderLookup,
                now: judgeAt)
            Self.ruleParameters(config: loaded).apply(to: &service)
            result = try service.lookup(query)
        } catch {
            fail("\(LookupError.storeUnavailable("\(location.displayName): \(error)"))", .storeUnavailable)
        }
        let exit: LookupExitCode = result.found ? .found : .notFound

        // Log before answering: an unlogged lookup is refused.
        let log = LookupAuditLog(
            path: auditLog.map { URL(fileURLWithPath: $0) } ?? LookupAuditLog.defaultPath(forStore: storePath))
        do {
            try log.append(
                LookupAuditLog.entry(
                    for: result, output: json ? "json" : (html != nil ? "html" : "text"), store: storePath.path,
                    exitCode: exit.rawValue, customerConsented: customerConsented))
        } catch {
            fail("\(error)", .ioError)
        }

        if json {
            do {
                print(try LookupJSON.encode(result), terminator: "")
            } catch {
                fail("cannot encode the answer: \(error)", .ioError)
            }
        } else if let html {
            do {
                try Data(LookupHTMLRenderer().render(result).utf8).write(to: URL(fileURLWithPath: html))
            } catch {
                fail("cannot write \(html): \(error.localizedDescription)", .ioError)
            }
            print(LookupTextRenderer().render(result), terminator: "")
            FileHandle.standardError.write(Data("iapguard lookup: wrote \(html)\n".utf8))
        } else {
            print(LookupTextRenderer().render(result), terminator: "")
        }
        if exit != .found { throw ExitCode(exit.rawValue) }
    }

    /// The rule parameters the lookup judges with (``LookupRuleParameters``), read from the config's rules
    /// folder (else ./rules) with the config's `rule_params` applied.
    static func ruleParameters(config: Config?) -> LookupRuleParameters {
        let folder = config?.rulesDirectory ?? URL(fileURLWithPath: "rules")
        return LookupRuleParameters(rules: RuleSet.load(from: folder).rules, overrides: config?.ruleParams ?? [:])
    }

    private func fail(_ message: String, _ code: LookupExitCode) -> Never {
        FileHandle.standardError.write(Data("iapguard lookup: \(message)\n".utf8))
        Foundation.exit(code.rawValue)
    }
}
