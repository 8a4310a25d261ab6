import Foundation
import PostgresNIO

/// Runs postgres-nio's asynchronous `COPY … FROM STDIN` from synchronous code: the copy runs as a task on
/// ``BlockingAsyncRunner``'s private executor and the calling thread waits for it.
enum PostgresCopy {
    /// Sends `data` (COPY text format, one line per row) into `table(columns)`.
    static func run(
        connection: PostgresConnection, table: String, columns: [String], data: String, logger: Logger
    ) throws {
        let outcome: String?? = BlockingAsyncRunner.run { () async -> String? in
            do {
                try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
                    var buffer = ByteBuffer()
                    buffer.writeString(data)
                    try await writer.write(buffer)
                }
                return nil
            } catch {
                return "\(PostgresStoreError(context: "COPY into \(table)", error: error))"
            }
        }
        switch outcome {
        case .none: throw PostgresStoreError(message: "COPY into \(table) did not finish")
        case .some(.none): return
        case .some(.some(let message)): throw PostgresStoreError(message: message)
        }
    }
}
