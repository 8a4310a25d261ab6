import Foundation

extension ApplePullSession {
    /// Get App Transaction Info for `bundle`: each credited, verified transaction stored without an
    /// `appTransactionId` is asked about once (in transaction id order, at most
    /// ``AppStoreAPIConfig/Pull/appTransactionCalls(maxCallsPerRun:)`` calls per run); the signed app
    /// transaction Apple returns must verify (Apple's chain, a configured app and environment), name this
    /// app's bundle and the environment asked, and carry an `appTransactionId`, which is then stored against
    /// the transaction. A transaction Apple has no app transaction for is asked again after
    /// `notFoundRecheck`; one whose answer did not verify is reported and asked again next run.
    func pullAppTransactionInfo(bundle: String, clients: [AppleEnvironment: AppStoreServerAPIClient]) throws {
        guard canCall, let recorder = store as? AppTransactionRecorder else { return }
        let limit = source.pull.appTransactionCalls(maxCallsPerRun: source.maxCallsPerRun)
        let nowMs = now()
        var candidates: [(id: String, environment: AppleEnvironment)] = []
        try store.query(
            """
            SELECT t.transaction_id, t.environment FROM transactions t
            WHERE t.bundle_id = :bundle AND t.verification = 'verified' AND t.app_transaction_id IS NULL
              AND EXISTS (SELECT 1 FROM credits c WHERE c.transaction_id = t.transaction_id AND c.user_id IS NOT NULL)
            ORDER BY t.transaction_id
            """, parameters: ["bundle": .text(bundle)]
        ) { _, row in
            if let id = row[0].textValue, Self.isAppleTransactionID(id),
                let environment = row[1].textValue.flatMap(AppleEnvironment.init(appleValue:)),
                clients[environment] != nil
            {
                candidates.append((id, environment))
            }
        }
        var calls = 0
        for (index, candidate) in candidates.enumerated() {
            let key = "app-transaction/\(bundle)/\(candidate.environment.rawValue)/\(candidate.id)"
            if let mark = try PullWatermark.load(store, source: source.name, key: key), let notFound = mark.notFoundAt,
                nowMs - notFound < notFoundRecheck
            {
                continue
            }
            guard calls < limit, let client = clients[candidate.environment], takeCall() else {
                let why = calls >= limit ? "app_transaction_calls reached" : outOfCalls
                summary.left.append(
                    "app transaction info: \(candidates.count - index) transaction(s) of \(bundle) not asked (\(why))")
                return
            }
            calls += 1
            let what =
                "app transaction info of \(bundle) (\(candidate.environment.rawValue)) for transaction \(candidate.id)"
            let signed: String?
            do {
                signed = try client.appTransactionInfo(transactionID: candidate.id)
                consecutiveFailures = 0
            } catch let error as AppStoreAPIError
                where (400..<500).contains(error.status) && error.status != 429
                && error.status != 401 && error.status != 403
            {
                // Apple has no app transaction for this id (not found, or a type it does not cover).
                consecutiveFailures = 0
                logger.debug("no app transaction", metadata: ["what": "\(what)", "error": "\(error)"])
                signed = nil
            } catch {
                failed("\(what): \(error)")
                summary.left.append("\(what) (the call failed)")
                continue
            }
            var mark = PullWatermark()
            mark.checkedAt = nowMs
            if let signed {
                switch appTransactionID(
                    signed, bundle: bundle, environment: candidate.environment, transactionID: candidate.id)
                {
                case .success(let appTransactionID):
                    if try recorder.recordAppTransactionID(appTransactionID, forTransaction: candidate.id, runID: runID)
                    {
                        summary.appTransactions += 1
                    }
                case .failure(let problem):
                    summary.errors.append("\(what): \(problem.message)")
                    continue
                }
            } else {
                mark.notFoundAt = nowMs
            }
            try mark.save(store, source: source.name, key: key, runID: runID)
        }
    }

    /// The `appTransactionId` of a signed app transaction Apple returned for `transactionID`, or why it cannot
    /// be stored.
    func appTransactionID(
        _ signed: String, bundle: String, environment: AppleEnvironment, transactionID: String
    ) -> Result<String, RecordError> {
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
