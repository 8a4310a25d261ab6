import Foundation
import IAPGuard

/// What every fuzz target shares: a scratch file per process, and the real ingest path
/// (``SourceIngestor``: line/CSV reader → parser → row mapper) run on that file.
///
/// The fuzz targets only look for crashes, hangs, sanitizer reports and runaway memory: every error a
/// parser throws is an expected outcome of malformed input.
public enum FuzzHarness {
    /// A per-process scratch folder (libFuzzer may run several jobs at once).
    static let folder: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "iapguard-fuzz-\(ProcessInfo.processInfo.processIdentifier)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }()

    /// Writes the input to `name` in the scratch folder and returns its URL.
    public static func scratch(_ bytes: UnsafeRawBufferPointer, name: String) -> URL {
        let url = folder.appendingPathComponent(name)
        _ = FileManager.default.createFile(atPath: url.path, contents: Data(bytes))
        return url
    }

    /// A minimal config whose only source is `kind`/`format` reading `input.<ext>` in the scratch folder.
    static func config(kind: String, format: String) -> Config {
        let yaml = """
            store: store.sqlite
            apps:
              - bundle_id: com.example.coins
                app_apple_id: 1234567
                environments: [Production, Sandbox]
                products:
                  - {product_id: com.example.coins.pack100, type: Consumable, units: 100, price: "0.99", currency: USD}
            sources:
              - {name: fuzz, kind: \(kind), format: \(format), path: input.\(format)}
            """
        do {
            return try Config.parse(yaml, file: folder.appendingPathComponent("iapguard.yml"))
        } catch {
            fatalError("the fuzz harness config does not load: \(error)")
        }
    }

    /// The verifier the signed targets use: the built-in Apple root plus the seed corpus's test root
    /// (`Fuzz/corpus/test-root.der`), so seeds signed by it reach the signature and claim checks.
    static let verifier: any AppleRecordVerifier = {
        let testRoot = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("corpus/test-root.der")
        var roots = [AppleRootCertificates.appleRootCAG3DER]
        if let der = try? Data(contentsOf: testRoot) { roots.append(der) }
        // The apps of the sample world the seeds come from (`iapguard generate`).
        let policy = VerificationPolicy(apps: [
            .init(bundleID: "com.example.coins", appAppleID: 1_234_567, environments: [.production, .sandbox]),
            .init(bundleID: "com.example.coins.plus", appAppleID: 1_234_568, environments: [.production, .sandbox]),
        ])
        do {
            return try JWSVerifier(trustedRootsDER: roots, policy: policy)
        } catch {
            fatalError("the fuzz harness verifier does not build: \(error)")
        }
    }()

    /// The store the ingest targets read file states from (never written: batches are only inspected).
    nonisolated(unsafe) static let store: SQLiteStore = {
        do {
            let store = try SQLiteStore(path: ":memory:")
            try store.migrate()
            return store
        } catch {
            fatalError("the fuzz harness store does not open: \(error)")
        }
    }()

    nonisolated(unsafe) static var configs: [String: Config] = [:]

    /// Runs the input through ``SourceIngestor`` as a file of the given source kind and format.
    /// A ``SourceError`` (bad header, unreadable) is an expected outcome; anything else is a bug.
    public static func ingest(_ bytes: UnsafeRawBufferPointer, kind: String, format: String) {
        let key = "\(kind)/\(format)"
        let config = configs[key] ?? config(kind: kind, format: format)
        configs[key] = config
        _ = scratch(bytes, name: "input.\(format)")
        let ingestor = SourceIngestor(source: config.sources[0], verifier: verifier, configHash: "fuzz", batchSize: 64)
        do {
            _ = try ingestor.ingest(
                store: store, runID: 1,
                sink: { batch in
                    // Touch what the store would write, so lazily computed values are evaluated too.
                    var total = 0
                    for sighting in batch.sightings { total &+= sighting.sightingID.utf8.count }
                    for record in batch.quarantined { total &+= record.reason.utf8.count + record.location.utf8.count }
                    precondition(total >= 0)
                })
        } catch is SourceError {
            // A source-level problem (e.g. a CSV header without its key column): reported, not a crash.
        } catch {
            fatalError("unexpected error type from ingest: \(type(of: error)): \(error)")
        }
    }
}
