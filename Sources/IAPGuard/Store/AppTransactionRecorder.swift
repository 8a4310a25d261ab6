/// What the App Store Server API pull needs to attach Apple's `appTransactionId`, read from a verified
/// signed app transaction (Get App Transaction Info), to a transaction already stored.
public protocol AppTransactionRecorder: AnyObject {
    /// Sets `app_transaction_id` of the verified transaction `transactionID` when it has none yet, marks the
    /// row changed in run `runID` (so incremental rules see it) and logs the change. Returns whether a row
    /// changed; a transaction that already names its Apple Account keeps it.
    func recordAppTransactionID(_ appTransactionID: String, forTransaction transactionID: String, runID: Int64)
        throws -> Bool
}

extension SQLBackedStore {
    public func recordAppTransactionID(_ appTransactionID: String, forTransaction transactionID: String, runID: Int64)
        throws -> Bool
    {
        try inTransaction {
            let changed = try connection.run(
                """
                UPDATE apple_transaction SET app_transaction_id = ?, last_run_id = ?
                WHERE transaction_id = ? AND app_transaction_id IS NULL AND verification = 'verified'
                """, [.text(appTransactionID), .integer(runID), .text(transactionID)])
            guard changed > 0 else { return false }
            try logChange(
                runID: runID, entity: "transaction", key: transactionID, field: "app_transaction_id", old: .null,
                new: .text(appTransactionID))
            return true
        }
    }
}

extension SQLiteStore: AppTransactionRecorder {}
extension PostgresStore: AppTransactionRecorder {}
