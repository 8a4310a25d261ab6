import Foundation

/// How far an App Store Server API pull got for one key (a notification query, a transaction's history, a
/// customer's refunds).
///
/// Watermarks live in the store's `file_state` table (source name = the API source's name, path = the key,
/// content hash = this value as JSON), so they share the store's backend and survive like file states. A
/// watermark is written only after the data of the page it describes was committed: a crash in between
/// re-fetches that page next run (writes are idempotent), it never skips one.
public struct PullWatermark: Sendable, Hashable, Codable {
    /// Transaction or refund history: the last page's `revision`.
    public var revision: String?
    /// Notification history in progress: the token of the next page, with the query window it belongs to.
    public var paginationToken: String?
    public var windowStart: Int64?
    public var windowEnd: Int64?
    /// Notification history: everything up to this time (epoch ms) was fetched.
    public var doneThrough: Int64?
    /// When the key was last pulled to the end (epoch ms).
    public var checkedAt: Int64?
    /// When Apple last answered "transaction not found" in every allowed environment (epoch ms).
    public var notFoundAt: Int64?
    /// Refund polling of an app: activity after this run id makes a customer due.
    public var activityAfterRun: Int64?
    /// Refund polling of an app: the rolling sweep's position (the last transaction id it reached).
    public var sweepAfter: String?
    /// Refund polling of an app: when the current sweep cycle started (epoch ms).
    public var sweepStartedAt: Int64?

    public init() {}

    /// The marker `file_state` rows of watermarks carry in `size` (file states hold a real size ≥ 0).
    static let marker: Int64 = -1

    /// Reads the watermark stored under `key` for `source`, if any.
    static func load(_ store: any PurchaseStore, source: String, key: String) throws -> PullWatermark? {
        guard let state = try store.fileState(sourceName: source, path: key), state.size == marker else { return nil }
        return try? JSONDecoder().decode(PullWatermark.self, from: Data(state.contentHash.utf8))
    }

    /// Stores the watermark (call only after the data it covers was committed).
    func save(_ store: any PurchaseStore, source: String, key: String, runID: Int64) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let text = String(decoding: try encoder.encode(self), as: UTF8.self)
        try store.setFileState(
            FileState(path: key, size: Self.marker, contentHash: text), sourceName: source, runID: runID)
    }
}
