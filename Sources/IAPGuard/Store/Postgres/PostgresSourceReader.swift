import Foundation

extension SourceIngestor {
    /// Reads a `format: postgres` source: runs its query on the backend database inside a read-only
    /// transaction through a cursor, fetching ``batchSize`` rows at a time, so memory stays bounded however
    /// many orders the backend holds. Columns are matched by their (aliased) names like a sqlite source.
    func ingestPostgres(sink: (IngestBatch) throws -> Void, shouldStop: () -> Bool) throws {
        guard let settings = source.postgres, let query = source.query else {
            throw SourceError(source: source.name, message: "a postgres source needs a url and a query")
        }
        let session: PostgresSession
        do {
            session = try PostgresSession(settings: settings, createSchema: false)
        } catch {
            throw SourceError(source: source.name, message: "\(error)")
        }
        var batch = IngestBatch()
        var index = 0
        do {
            try session.execute("BEGIN TRANSACTION READ ONLY")
            defer { try? session.execute("ROLLBACK") }
            let statement = query.trimmingCharacters(in: .whitespacesAndNewlines.union(CharacterSet(charactersIn: ";")))
            try session.execute("DECLARE iapguard_source NO SCROLL CURSOR FOR \(statement)")
            while !shouldStop() {
                var fetched = 0
                try session.query("FETCH FORWARD \(max(1, batchSize)) FROM iapguard_source", named: [:]) {
                    columns, values in
                    fetched += 1
                    index += 1
                    var row: [String: String] = [:]
                    for (column, value) in zip(columns, values) {
                        if let text = value.textValue { row[column.lowercased()] = text }
                    }
                    let location = "\(source.name):row \(index)"
                    do {
                        try addBackendRow(row, location: location, into: &batch)
                    } catch let error as RecordError {
                        let raw = Array(row.description.utf8)
                        batch.quarantined.append(
                            QuarantinedRecord(
                                sourceName: source.name, location: location, reason: error.message,
                                rawExcerpt: String(decoding: raw.prefix(4096), as: UTF8.self),
                                rawHash: Hashing.sha256Hex(Data(raw))))
                    }
                }
                if !batch.isEmpty { try sink(batch) }
                batch = IngestBatch()
                if fetched == 0 { break }
            }
        } catch let error as PostgresStoreError {
            throw SourceError(
                source: source.name, message: "\(settings): the configured query failed: \(error.message)")
        }
    }
}
