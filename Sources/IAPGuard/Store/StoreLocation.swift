import Foundation

/// Which store a config names: a SQLite file (the default) or a PostgreSQL database (`store: postgres://…`).
/// The one way the commands and the pipeline open a store.
public enum StoreLocation: Sendable, Hashable {
    case sqlite(path: String)
    case postgres(PostgresSettings)

    /// The store a read-only command works on: `--store PATH` when given (always a SQLite file), else the
    /// config's store; `nil` when there is neither.
    public static func resolve(storeOption: String?, config: Config?) -> StoreLocation? {
        if let storeOption { return .sqlite(path: URL(fileURLWithPath: storeOption).standardizedFileURL.path) }
        return config?.storeLocation
    }

    /// Opens the store, not yet migrated. A read-only SQLite store must exist; a read-write one is created
    /// when missing. PostgreSQL is reached over one session either way (the commands that read never write).
    public func open(readOnly: Bool = false) throws -> any SQLBackedStore {
        switch self {
        case .sqlite(let path): return try SQLiteStore(path: path, readOnly: readOnly)
        case .postgres(let settings): return try PostgresStore(settings: settings)
        }
    }

    /// Opens the store for a run: takes the run's single-instance lock, opens the store and migrates it.
    /// For SQLite the lock (`<store>.lock`) comes first, so a second run never even opens or creates the
    /// store; PostgreSQL takes an advisory lock on its session. The lock is held while `lock` lives.
    /// `discarded` tells that a SQLite first load killed while it wrote without a journal was deleted
    /// (``FirstLoadMarker``): the store is new again.
    func openForRun() throws -> (store: any SQLBackedStore, lock: AnyObject, discarded: Bool) {
        let store: any SQLBackedStore
        let lock: AnyObject
        var discarded = false
        switch self {
        case .sqlite(let path):
            lock = try RunLock(path: path + ".lock")
            discarded = try FirstLoadMarker(storePath: path).discardInterruptedLoad()
            store = try SQLiteStore(path: path)
        case .postgres(let settings):
            let postgres = try PostgresStore(settings: settings)
            lock = try postgres.acquireRunLock()
            store = postgres
        }
        try store.migrate()
        return (store, lock, discarded)
    }

    /// Whether there is a store to read: a SQLite file exists; a PostgreSQL store is assumed to.
    public var exists: Bool {
        switch self {
        case .sqlite(let path): return FileManager.default.fileExists(atPath: path)
        case .postgres: return true
        }
    }

    /// Where the store is, for messages: the file path, or the PostgreSQL URL without its password.
    public var displayName: String {
        switch self {
        case .sqlite(let path): return path
        case .postgres(let settings): return "\(settings)"
        }
    }
}

extension Config {
    /// The configured store: ``postgresStore`` when set, else the SQLite file at ``storePath``.
    public var storeLocation: StoreLocation {
        if let postgresStore { return .postgres(postgresStore) }
        return .sqlite(path: storePath.path)
    }
}
