/// An error raised by a store, whichever the engine: SQLite's, PostgreSQL's, or the store layer's own. A run
/// that stops on one exits with ``RunExitCode/ioError`` (74; see ``RunExitCode/init(error:)``).
public protocol StoreFailure: Error {}

extension SQLiteError: StoreFailure {}
extension PostgresStoreError: StoreFailure {}
extension StoreError: StoreFailure {}
