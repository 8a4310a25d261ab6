import Foundation

@testable import IAPGuard

/// Runs for the store's post-ingest ledger passes (order links, clawbacks): each batch written as one run,
/// then the pass, as the pipeline does after its ingest.
enum LedgerPassRuns {
    /// A migrated in-memory SQLite store.
    static func memoryStore() throws -> SQLiteStore {
        let store = try SQLiteStore(path: ":memory:")
        try store.migrate()
        return store
    }

    /// Writes each batch as one run and calls `pass` with the store and the run id after it; returns the run ids.
    @discardableResult
    static func runs(
        _ batches: [IngestBatch], on store: any SQLBackedStore, pass: (any SQLBackedStore, Int64) throws -> Void
    ) throws -> [Int64] {
        var ids: [Int64] = []
        for batch in batches {
            let runID = try store.beginRun(
                RunStart(startedAt: 1, windowSince: nil, windowUntil: nil, configHash: "h", toolVersion: "t"))
            _ = try store.write(batch, runID: runID)
            try pass(store, runID)
            ids.append(runID)
        }
        return ids
    }
}
