import Foundation

extension ApplePullSession {
    /// Get App Transaction Info for `bundle`: the credited, verified transactions stored without an
    /// `appTransactionId` are asked about in transaction id order, on from where the last run stopped (a
    /// cursor, so a run reads only the rows it asks about), at most
    /// ``AppStoreAPIConfig/Pull/appTransactionCalls(maxCallsPerRun:)`` per run. The signed app transaction
    /// Apple returns must verify (Apple's chain, a configured app and environment), name this app's bundle
    /// and the environment asked, and carry an `appTransactionId`, which is then stored against the
    /// transaction. New transactions (higher ids) are reached as they come; once per `notFoundRecheck` the
    /// cursor starts over, so a transaction Apple had no app transaction for, or whose answer did not verify,
    /// is asked again. A call that fails leaves the cursor before it.
    func pullAppTransactionInfo(bundle: String, clients: [AppleEnvironment: AppStoreServerAPIClient]) throws {
        guard canCall, let recorder = store as? AppTransactionRecorder else { return }
        let limit = source.pull.appTransactionCalls(maxCallsPerRun: source.maxCallsPerRun)
        let nowMs = now()
        let cursorKey = "app-transaction/\(bundle)/cursor"
        var cursor = try PullWatermark.load(store, source: source.name, key: cursorKey) ?? PullWatermark()
        var after = cursor.sweepAfter ?? ""
        if let started = cursor.sweepStartedAt, nowMs - started >= notFoundRecheck {
            after = ""
            cursor.sweepStartedAt = nil
        }
        if cursor.sweepStartedAt == nil { cursor.sweepStartedAt = nowMs }
        var rows: [(id: String, environment: String?)] = []
        try store.query(
            """
            SELECT t.transaction_id, t.environment FROM transactions t
            WHERE t.bundle_id = :bundle AND t.verification = 'verified' AND t.app_transaction_id IS NULL
              AND t.transaction_id > :after
              AND EXISTS (SELECT 1 FROM credits c WHERE c.transaction_id = t.transaction_id AND c.user_id IS NOT NULL)
            ORDER BY t.transaction_id
            LIMIT :limit
            """, parameters: ["bundle": .text(bundle), "after": .text(after), "limit": .integer(Int64(limit))]
        ) { _, row in
            if let id = row[0].textValue { rows.append((id, row[1].textValue)) }
        }
        var stopped = false
        for (index, row) in rows.enumerated() {
            guard Self.isAppleTransactionID(row.id),
                let environment = row.environment.flatMap(AppleEnvironment.init(appleValue:)),
                let client = clients[environment]
            else {
                after = row.id
                continue
            }
            guard takeCall() else {
                summary.left.append(
                    "app transaction info: \(rows.count - index) transaction(s) of \(bundle) not asked (\(outOfCalls))")
                stopped = true
                break
            }
            let what = "app transaction info of \(bundle) (\(environment.rawValue)) for transaction \(row.id)"
            let signed: String?
            do {
                signed = try client.appTransactionInfo(transactionID: row.id)
                consecutiveFailures = 0
            } catch let error as AppStoreAPIError
                where (400..<500).contains(error.status) && ![401, 403, 429].contains(error.status)
            {
                // Apple has no app transaction for this id (not found, or a kind it does not cover).
                consecutiveFailures = 0
                logger.debug("no app transaction", metadata: ["what": "\(what)", "error": "\(error)"])
                signed = nil
            } catch {
                failed("\(what): \(error)")
                summary.left.append("\(what) (the call failed)")
                stopped = true
                break
            }
            if let signed {
                switch appTransactionID(signed, bundle: bundle, environment: environment) {
                case .success(let appTransactionID):
                    if try recorder.recordAppTransactionID(appTransactionID, forTransaction: row.id, runID: runID) {
                        summary.appTransactions += 1
                    }
                case .failure(let problem):
                    summary.errors.append("\(what): \(problem.message)")
                }
            }
            after = row.id
        }
        if !stopped, rows.count == limit {
            summary.left.append(
                "app transaction info of \(bundle): app_transaction_calls reached at transaction \(after); the next run goes on"
            )
        }
        cursor.sweepAfter = after.isEmpty ? nil : after
        cursor.checkedAt = nowMs
        try cursor.save(store, source: source.name, key: cursorKey, runID: runID)
    }

    /// The `appTransactionId` of a signed app transaction Apple returned, or why it cannot be stored.
    func appTransactionID(_ signed: String, bundle: String, environment: AppleEnvironment) -> Result<
        String, RecordError
    > {
        let jws: CompactJWS
        do {
            jws = try CompactJWS(signed)
        } catch {
            return .failure(RecordError("signedAppTransactionInfo is not a compact JWS: \(error)"))
        }
        let outcome = verifier.verifyAppTransaction(jws)
        guard outcome.status == .verified else {
            return .failure(
                RecordError(
                    "the signed app transaction did not verify (\(outcome.reason ?? outcome.status.rawValue)"
                        + (outcome.detail.map { ": \($0)" } ?? "") + ")"))
        }
        let payload = jws.payloadObject
        do {
            guard let signedBundle = try payload.schemaString("bundleId"), signedBundle == bundle else {
                return .failure(RecordError("the signed app transaction is not of \(bundle)"))
            }
            guard try payload.schemaString("receiptType") == environment.rawValue else {
                return .failure(RecordError("the signed app transaction is not of \(environment.rawValue)"))
            }
            guard let id = try payload.schemaString("appTransactionId"), !id.isEmpty else {
                return .failure(RecordError("the signed app transaction has no appTransactionId"))
            }
            return .success(id)
        } catch let error as RecordError {
            return .failure(error)
        } catch {
            return .failure(RecordError("\(error)"))
        }
    }
}
