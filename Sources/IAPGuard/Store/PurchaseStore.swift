/// What the pipeline needs from a store. SQLite is the embedded default, PostgreSQL the one for large
/// estates (``SQLBackedStore`` holds the statements both share). Rules and reports read through ``query(_:parameters:_:)``
/// against the documented views only.
public protocol PurchaseStore: AnyObject {
    /// Brings the schema to ``Schema/latestVersion``.
    func migrate() throws
    /// Starts a run record and returns its id.
    func beginRun(_ start: RunStart) throws -> Int64
    /// Closes a run record.
    func finishRun(_ runID: Int64, status: String, finishedAt: Int64, summaryJSON: String?) throws
    /// Replaces the configured reference data (apps, catalog, testers, FX rates).
    func replaceReferenceData(_ data: ReferenceData) throws
    /// Writes one batch atomically; returns what changed.
    func write(_ batch: IngestBatch, runID: Int64) throws -> WriteCounts
    /// Adds to the per-source counters of a run.
    func recordSourceCounts(runID: Int64, sourceName: String, sourceKind: String, counts: WriteCounts) throws
    /// The state recorded for an input file after it was fully ingested, if any.
    func fileState(sourceName: String, path: String) throws -> FileState?
    /// Records that a file was fully ingested (call after its data is committed).
    func setFileState(_ state: FileState, sourceName: String, runID: Int64) throws
    /// Removes the quarantined records of a source's file named `fileName` (locations `fileName:…`) that run
    /// `runID` did not write again: called once the file was read whole and its batches written, so what is
    /// left is no longer in the file.
    func removeQuarantined(sourceName: String, fileName: String, notSeenIn runID: Int64) throws
    /// Replaces what `sourceName` has not asked Apple about by `transactionIDs`, each with `reason`
    /// (`unchecked_transactions`).
    func setUncheckedTransactions(_ transactionIDs: [String], reason: String, sourceName: String, runID: Int64) throws
    /// Sets the reason of one transaction `sourceName` has not asked Apple about; `nil` removes it (Apple
    /// answered).
    func setUnchecked(_ transactionID: String, reason: String?, sourceName: String, runID: Int64) throws
    /// Runs read-only SQL with named parameters, handing rows to `body`.
    func query(
        _ sql: String, parameters: [String: SQLValue], _ body: (_ columns: [String], _ row: [SQLValue]) throws -> Void
    ) throws
    /// Runs `body` in one store transaction.
    func inTransaction<T>(_ body: () throws -> T) throws -> T
    /// Runs `body` so that a statement failing inside it does not spoil the enclosing transaction: on
    /// PostgreSQL, where any failed statement aborts the whole transaction, in a savepoint; on SQLite,
    /// where a failed query leaves the transaction usable, as it is.
    func isolatingFailure<T>(_ body: () throws -> T) throws -> T
    /// Where the store is, for logs and summaries (a file path, or a PostgreSQL URL without its password).
    var location: String { get }
    /// Takes the single-instance lock for a run, or throws at once when another run holds it. The lock is
    /// held while the returned object lives.
    func acquireRunLock() throws -> AnyObject
    /// A read-only query to run many times with different parameters (see ``RepeatedQuery``).
    func repeatedQuery(_ sql: String) throws -> any RepeatedQuery
    /// Prepares a first load: when the big tables are still empty, a store that builds indexes faster in
    /// one pass than row by row drops their secondary indexes until ``finishBulkLoad()``. Returns whether
    /// indexes are deferred now (also when a killed run left them deferred).
    func beginBulkLoad() throws -> Bool
    /// Builds every index ``beginBulkLoad()`` deferred (nothing when none is), then ``secureBulkLoad()``.
    func finishBulkLoad() throws
    /// Builds the indexes ``beginBulkLoad()`` deferred on `tables` only, while the load goes on: a table no
    /// later source writes can be indexed while the next sources are still being parsed. Rows written to
    /// it afterwards keep the built indexes up to date as usual. Stores that defer nothing do nothing.
    func buildDeferredIndexes(on tables: Set<String>) throws
    /// Makes what a first load wrote durable and crash-safe again when the store wrote it with less
    /// (SQLite: without a journal), leaving any deferred index for a later ``finishBulkLoad()``.
    func secureBulkLoad() throws
    /// Opens a write group: the batches written until ``commitWriteGroup()`` and the file states recorded
    /// with them are committed together. A batch that fails to write rolls the whole open group back, as a
    /// kill would: the next run writes it again. Stores that commit each batch on its own do nothing.
    func beginWriteGroup() throws
    /// Commits the open write group, if any.
    func commitWriteGroup() throws
    /// Moves the checkpoints of the ingest that follows off the writer, when the store has any (SQLite's
    /// WAL). Stores without do nothing.
    func beginIngestCheckpoints() throws
    /// Asks for a checkpoint of everything committed so far without waiting for it: the run goes on (the
    /// incremental scope) while the ingest's last pages are copied. Stores without checkpoints do nothing.
    func requestIngestCheckpoint()
    /// Ends ``beginIngestCheckpoints()``: whatever the ingest committed is checkpointed when it returns.
    func endIngestCheckpoints() throws
}

extension PurchaseStore {
    /// Every row of a read-only query with named parameters.
    public func isolatingFailure<T>(_ body: () throws -> T) throws -> T { try body() }

    public func repeatedQuery(_ sql: String) throws -> any RepeatedQuery { StoreRepeatedQuery(store: self, sql: sql) }

    /// Stores that keep their indexes during a load (PostgreSQL copies rows in bulk) defer nothing.
    public func beginBulkLoad() throws -> Bool { false }

    public func finishBulkLoad() throws {}
    public func buildDeferredIndexes(on tables: Set<String>) throws {}

    public func secureBulkLoad() throws {}

    public func beginWriteGroup() throws {}

    public func commitWriteGroup() throws {}

    public func beginIngestCheckpoints() throws {}

    public func requestIngestCheckpoint() {}

    public func endIngestCheckpoints() throws {}

    public func rows(_ sql: String, _ parameters: [String: SQLValue] = [:]) throws -> [[SQLValue]] {
        var rows: [[SQLValue]] = []
        try query(sql, parameters: parameters) { _, row in rows.append(row) }
        return rows
    }

    /// The first column of the first row of a read-only query, or `nil`.
    public func scalar(_ sql: String, _ parameters: [String: SQLValue] = [:]) throws -> SQLValue? {
        try rows(sql, parameters).first?.first
    }
}

/// The opening facts of a run.
public struct RunStart: Sendable {
    public var startedAt: Int64
    public var windowSince: Int64?
    public var windowUntil: Int64?
    public var configHash: String
    public var toolVersion: String

    public init(startedAt: Int64, windowSince: Int64?, windowUntil: Int64?, configHash: String, toolVersion: String) {
        self.startedAt = startedAt
        self.windowSince = windowSince
        self.windowUntil = windowUntil
        self.configHash = configHash
        self.toolVersion = toolVersion
    }
}

/// What a file looked like when it was last fully ingested.
public struct FileState: Sendable, Hashable {
    public var path: String
    public var size: Int64
    public var contentHash: String
    /// `FileIdentity.key` when the content was hashed, or nil (racy, unreadable, or not a file): a file
    /// whose identity is unchanged is skipped without reading it.
    public var statKey: String?

    public init(path: String, size: Int64, contentHash: String, statKey: String? = nil) {
        self.path = path
        self.size = size
        self.contentHash = contentHash
        self.statKey = statKey
    }

    /// Whether `other` has the same content (size and hash; the identity is not compared).
    public func hasSameContent(as other: FileState) -> Bool {
        size == other.size && contentHash == other.contentHash
    }
}

/// A batch of parsed and verified records, written in one transaction.
public struct IngestBatch: Sendable {
    public var sightings: [AppleSighting] = []
    public var orders: [(order: BackendOrder, sourceName: String, sourceRef: String)] = []
    public var credits: [(credit: Credit, sourceName: String, sourceRef: String)] = []
    public var notifications: [AppleNotification] = []
    public var quarantined: [QuarantinedRecord] = []
    /// Accounts from `kind: users` sources.
    public var users: [(user: UserAccount, sourceName: String, sourceRef: String)] = []

    public init() {}

    public var isEmpty: Bool {
        sightings.isEmpty && orders.isEmpty && credits.isEmpty && notifications.isEmpty && quarantined.isEmpty
            && users.isEmpty
    }

    public var recordCount: Int {
        sightings.count + orders.count + credits.count + notifications.count + quarantined.count + users.count
    }
}

/// Counts of what a write did.
public struct WriteCounts: Sendable, Hashable, Codable {
    public var records = 0
    public var inserted = 0
    public var updated = 0
    public var unchanged = 0
    public var errors = 0
    public var filesSkipped = 0

    public init() {}

    public static func + (lhs: WriteCounts, rhs: WriteCounts) -> WriteCounts {
        var sum = lhs
        sum.records += rhs.records
        sum.inserted += rhs.inserted
        sum.updated += rhs.updated
        sum.unchanged += rhs.unchanged
        sum.errors += rhs.errors
        sum.filesSkipped += rhs.filesSkipped
        return sum
    }
}

/// Reference data from the config, loaded into the store at the start of each run.
public struct ReferenceData: Sendable {
    public struct App: Sendable, Hashable {
        public var bundleID: String
        public var appAppleID: Int64?
        public var environments: [String]
        public init(bundleID: String, appAppleID: Int64?, environments: [String]) {
            self.bundleID = bundleID
            self.appAppleID = appAppleID
            self.environments = environments
        }
    }
    public struct Product: Sendable, Hashable {
        public var bundleID: String
        public var productID: String
        public var type: String
        public var units: Int64
        public var referencePrice: Int64?
        public var referenceCurrency: String?
        public init(
            bundleID: String, productID: String, type: String, units: Int64, referencePrice: Int64?,
            referenceCurrency: String?
        ) {
            self.bundleID = bundleID
            self.productID = productID
            self.type = type
            self.units = units
            self.referencePrice = referencePrice
            self.referenceCurrency = referenceCurrency
        }
    }
    public struct FXRate: Sendable, Hashable {
        public var currency: String
        /// Epoch ms of the rate's day at 00:00 UTC.
        public var rateDate: Int64
        /// Units of `currency` per 1 EUR (ECB convention).
        public var perEUR: Double
        public var source: String
        public init(currency: String, rateDate: Int64, perEUR: Double, source: String) {
            self.currency = currency
            self.rateDate = rateDate
            self.perEUR = perEUR
            self.source = source
        }
    }

    public var apps: [App] = []
    public var products: [Product] = []
    public var testers: [String] = []
    public var fxRates: [FXRate] = []

    public init() {}
}
