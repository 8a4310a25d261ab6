import Foundation

/// Which store a config names: a SQLite file (the default) or a PostgreSQL database (`store: postgres://…`).
public enum StoreLocation: Sendable, Hashable {
    case sqlite(path: String)
    case postgres(PostgresSettings)

    /// Opens the store (not yet migrated).
    public func open() throws -> any SQLBackedStore {
        switch self {
        case .sqlite(let path): return try SQLiteStore(path: path)
        case .postgres(let settings): return try PostgresStore(settings: settings)
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
