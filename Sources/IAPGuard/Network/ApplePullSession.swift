import Foundation
import Logging

/// One run's pull from one API source: the call budget, the summary, and the three kinds of pull.
final class ApplePullSession {
    let source: AppStoreAPIConfig
    let store: any PurchaseStore
    let runID: Int64
    let verifier: any AppleRecordVerifier
    let logger: Logger
    let now: @Sendable () -> Int64
    let shouldStop: () -> Bool
    let notificationOverlap: Int64
    let notFoundRecheck: Int64
    private(set) var budget: Int
    var summary: ApplePullSummary
    /// Calls that failed in a row; at ``failureLimit`` the source stops for this run (Apple is down or
    /// unreachable: spending the budget on retries would only delay the rest of the run).
    private var consecutiveFailures = 0
    static let failureLimit = 3

    /// Apple keeps notification history this long (ms): 180 days in Production, 30 in Sandbox.
    static func historyLimit(_ environment: AppleEnvironment) -> Int64 {
        (environment == .sandbox ? 30 : 180) * 86_400_000
    }

    init(
        source: AppStoreAPIConfig, store: any PurchaseStore, runID: Int64, verifier: any AppleRecordVerifier,
        logger: Logger, now: @escaping @Sendable () -> Int64, shouldStop: @escaping () -> Bool,
        notificationOverlap: Int64, notFoundRecheck: Int64
    ) {
        self.source = source
        self.store = store
        self.runID = runID
        self.verifier = verifier
        self.logger = logger
        self.now = now
        self.shouldStop = shouldStop
        self.notificationOverlap = notificationOverlap
        self.notFoundRecheck = notFoundRecheck
        self.budget = source.maxCallsPerRun
        self.summary = ApplePullSummary(source: source.name)
    }

    /// Takes one call from the budget, or returns false when the budget is spent or a stop was requested.
    private func takeCall() -> Bool {
        guard canCall else { return false }
        budget -= 1
        summary.calls += 1
        return true
    }

    private var canCall: Bool { budget > 0 && consecutiveFailures < Self.failureLimit && !shouldStop() }

    private var outOfCalls: String {
        if shouldStop() { return "stop requested" }
        if consecutiveFailures >= Self.failureLimit { return "\(consecutiveFailures) calls in a row failed" }
        return "call budget spent"
    }

    private func failed(_ message: String) {
        consecutiveFailures += 1
        summary.errors.append(message)
    }

    // MARK: - Notification history

    /// Pulls the notification history queries of one app (environments × types), least recently completed
    /// first, so re-polling finished queries cannot starve one that never finished.
    func pullNotifications(bundle: String, clients: [AppStoreServerAPIClient], types: [String?]) throws {
        var queries: [(client: AppStoreServerAPIClient, type: String?, key: String, mark: PullWatermark?)] = []
        for client in clients {
            for type in types {
                let key = notificationKey(bundle, client.environment, type)
                queries.append((client, type, key, try PullWatermark.load(store, source: source.name, key: key)))
            }
        }
        let order = queries.enumerated().sorted {
            let a = $0.element.mark?.checkedAt ?? Int64.min
            let b = $1.element.mark?.checkedAt ?? Int64.min
            return a != b ? a < b : $0.offset < $1.offset
        }
        for (_, query) in order {
            try pullNotifications(bundle: bundle, client: query.client, type: query.type, key: query.key)
        }
    }

    private func notificationKey(_ bundle: String, _ environment: AppleEnvironment, _ type: String?) -> String {
        "notifications/\(bundle)/\(environment.rawValue)/\(type ?? "*")/\(source.pull.onlyFailures ? "failures" : "all")"
    }

    /// Pulls notification history of one app, environment and type from the watermark to now.
    private func pullNotifications(bundle: String, client: AppStoreServerAPIClient, type: String?, key: String) throws {
        let environment = client.environment
        var mark = try PullWatermark.load(store, source: source.name, key: key) ?? PullWatermark()
        let nowMs = now()
        let appleOldest = nowMs - Self.historyLimit(environment) + 3_600_000
        let configuredOldest = max(appleOldest, nowMs - Int64(source.lookbackDays) * 86_400_000)
        var start: Int64
        var end: Int64
        var token: String?
        if let pending = mark.paginationToken, let s = mark.windowStart, let e = mark.windowEnd, s >= appleOldest {
            (start, end, token) = (s, e, pending)
        } else {
            start = max(configuredOldest, (mark.doneThrough ?? configuredOldest) - notificationOverlap)
            end = nowMs - 60_000
            token = nil
        }
        guard start < end else { return }
        let what = "notification history of \(bundle) (\(environment.rawValue), \(type ?? "all types"))"
        while true {
            guard takeCall() else {
                summary.left.append("\(what) from \(Self.iso(start)) to \(Self.iso(end)) (\(outOfCalls))")
                return
            }
            let query = NotificationHistoryQuery(
                startDate: start, endDate: end, notificationType: type,
                onlyFailures: source.pull.onlyFailures ? true : nil)
            let page: NotificationHistoryPage
            do {
                page = try client.notificationHistory(query, paginationToken: token)
            } catch let error as AppStoreAPIError
                where token != nil && [4_000_014, 4_000_017].contains(error.errorCode)
            {
                // An invalid or expired pagination token: read the window again from its start (duplicates
                // are recognised by notification UUID).
                logger.warning("pagination token rejected; restarting the window", metadata: ["what": "\(what)"])
                token = nil
                continue
            } catch {
                failed("\(what): \(error)")
                summary.left.append("\(what) from \(Self.iso(start)) to \(Self.iso(end)) (the call failed)")
                return
            }
            var batch = IngestBatch()
            let location = "\(environment.rawValue) notification history"
            let parser = NotificationParser(sourceName: source.name, verifier: verifier)
            for item in page.items {
                let hash = Hashing.sha256Hex(item.signedPayload)
                do {
                    let (notification, sighting) = try parser.parse(
                        JSONObject(["signedPayload": item.signedPayload]), payloadHash: hash, location: location)
                    batch.notifications.append(notification)
                    if let sighting { batch.sightings.append(sighting) }
                } catch let error as RecordError {
                    batch.quarantined.append(quarantine(location, error.message, item.signedPayload, hash))
                }
            }
            consecutiveFailures = 0
            summary.counts = summary.counts + (try store.write(batch, runID: runID))
            summary.notificationPages += 1
            summary.notifications += page.items.count
            if page.hasMore, let next = page.paginationToken {
                mark.paginationToken = next
                mark.windowStart = start
                mark.windowEnd = end
                token = next
            } else {
                mark.paginationToken = nil
                mark.windowStart = nil
                mark.windowEnd = nil
                mark.doneThrough = end
                mark.checkedAt = nowMs
            }
            try mark.save(store, source: source.name, key: key, runID: runID)
            if token == nil || !page.hasMore { return }
        }
    }

    // MARK: - Transaction history

    /// Pulls the history of credited transactions of `bundle` that the store has not seen verified.
    func pullTransactionHistory(bundle: String, clients: [AppStoreServerAPIClient]) throws {
        guard !clients.isEmpty else { return }
        var candidates: [String] = []
        try store.query(
            """
            SELECT DISTINCT c.transaction_id
            FROM credits c
            LEFT JOIN transactions t ON t.transaction_id = c.transaction_id
            LEFT JOIN orders o ON o.transaction_id = c.transaction_id
            WHERE c.transaction_id IS NOT NULL AND c.transaction_id <> ''
              AND (t.transaction_id IS NULL OR t.verification <> 'verified')
              AND COALESCE(t.bundle_id, o.bundle_id, :bundle) = :bundle
            ORDER BY c.transaction_id
            """, parameters: ["bundle": .text(bundle)]
        ) { _, row in
            if let id = row[0].textValue { candidates.append(id) }
        }
        let nowMs = now()
        for (index, transactionID) in candidates.enumerated() {
            // Apple's transaction ids are decimal numbers; anything else (forged markers) is for the rules.
            guard Self.isAppleTransactionID(transactionID) else { continue }
            let key = "history/\(bundle)/\(transactionID)"
            if let mark = try PullWatermark.load(store, source: source.name, key: key), let notFound = mark.notFoundAt,
                nowMs - notFound < notFoundRecheck
            {
                continue
            }
            if try isVerified(transactionID) { continue }
            guard canCall else {
                summary.left.append(
                    "transaction history: \(candidates.count - index) credited transaction(s) of \(bundle) not checked (\(outOfCalls))"
                )
                return
            }
            var notFoundEverywhere = true
            for client in clients {
                let result = try pullSignedPages(
                    kind: .history, bundle: bundle, client: client, transactionID: transactionID,
                    key: "history/\(bundle)/\(client.environment.rawValue)/\(transactionID)")
                if result == .notFound { continue }
                notFoundEverywhere = false
                break
            }
            if notFoundEverywhere {
                summary.transactionsNotFound.append(transactionID)
                var mark = PullWatermark()
                mark.notFoundAt = nowMs
                try mark.save(store, source: source.name, key: key, runID: runID)
            }
        }
    }

    // MARK: - Refund history

    /// Pulls refund history for customers with credited, verified transactions of `bundle`, least recently
    /// checked first.
    func pullRefundHistory(bundle: String, clients: [AppleEnvironment: AppStoreServerAPIClient]) throws {
        var customers: [(user: String, transactionID: String, environment: AppleEnvironment, checkedAt: Int64)] = []
        var rows: [(String, String, String)] = []
        try store.query(
            """
            SELECT c.user_id, MIN(t.transaction_id), t.environment
            FROM credits c JOIN transactions t ON t.transaction_id = c.transaction_id
            WHERE t.verification = 'verified' AND t.bundle_id = :bundle AND c.user_id IS NOT NULL
            GROUP BY c.user_id, t.environment
            ORDER BY c.user_id, t.environment
            """, parameters: ["bundle": .text(bundle)]
        ) { _, row in
            if let user = row[0].textValue, let id = row[1].textValue, let env = row[2].textValue {
                rows.append((user, id, env))
            }
        }
        for (user, transactionID, environmentText) in rows {
            guard let environment = AppleEnvironment(appleValue: environmentText), clients[environment] != nil,
                Self.isAppleTransactionID(transactionID)
            else { continue }
            let mark = try PullWatermark.load(store, source: source.name, key: refundKey(bundle, environment, user))
            customers.append((user, transactionID, environment, mark?.checkedAt ?? Int64.min))
        }
        customers.sort {
            ($0.checkedAt, $0.user, $0.environment.rawValue) < ($1.checkedAt, $1.user, $1.environment.rawValue)
        }
        for (index, customer) in customers.enumerated() {
            guard let client = clients[customer.environment] else { continue }
            guard canCall else {
                summary.left.append(
                    "refund history: \(customers.count - index) customer(s) of \(bundle) not checked this run (\(outOfCalls))"
                )
                return
            }
            _ = try pullSignedPages(
                kind: .refunds, bundle: bundle, client: client, transactionID: customer.transactionID,
                key: refundKey(bundle, customer.environment, customer.user))
        }
    }

    private func refundKey(_ bundle: String, _ environment: AppleEnvironment, _ user: String) -> String {
        "refunds/\(bundle)/\(environment.rawValue)/\(user)"
    }

    // MARK: - Paging signed transactions

    enum PageKind: String {
        case history = "transaction history"
        case refunds = "refund history"
    }

    enum PagesResult: Equatable {
        case complete, notFound, incomplete
    }

    /// Pages through transaction or refund history from the key's revision, committing each page before
    /// the revision moves.
    private func pullSignedPages(
        kind: PageKind, bundle: String, client: AppStoreServerAPIClient, transactionID: String, key: String
    ) throws -> PagesResult {
        var mark = try PullWatermark.load(store, source: source.name, key: key) ?? PullWatermark()
        let what = "\(kind.rawValue) of \(bundle) (\(client.environment.rawValue)) for transaction \(transactionID)"
        while true {
            guard takeCall() else {
                summary.left.append("\(what): more pages (\(outOfCalls))")
                return .incomplete
            }
            let page: SignedTransactionPage
            do {
                page =
                    kind == .history
                    ? try client.transactionHistory(transactionID: transactionID, revision: mark.revision)
                    : try client.refundHistory(transactionID: transactionID, revision: mark.revision)
            } catch let error as AppStoreAPIError where error.isTransactionNotFound {
                consecutiveFailures = 0
                logger.debug("transaction not found", metadata: ["what": "\(what)"])
                return .notFound
            } catch {
                failed("\(what): \(error)")
                summary.left.append("\(what) (the call failed)")
                return .incomplete
            }
            var batch = IngestBatch()
            let location = "\(client.environment.rawValue) \(kind.rawValue) \(transactionID)"
            let parser = SignedTransactionParser(sourceName: source.name, verifier: verifier)
            for signed in page.signedTransactions {
                let hash = Hashing.sha256Hex(signed)
                do {
                    var sighting = try parser.parse(signed, payloadHash: hash, location: location)
                    sighting.sourceKind = .api
                    batch.sightings.append(sighting)
                } catch let error as RecordError {
                    batch.quarantined.append(
                        quarantine("\(client.environment.rawValue) \(kind.rawValue)", error.message, signed, hash))
                }
            }
            consecutiveFailures = 0
            summary.counts = summary.counts + (try store.write(batch, runID: runID))
            switch kind {
            case .history:
                summary.historyPages += 1
                summary.historyTransactions += page.signedTransactions.count
            case .refunds:
                summary.refundPages += 1
                summary.refundTransactions += page.signedTransactions.count
            }
            if let revision = page.revision { mark.revision = revision }
            if !page.hasMore { mark.checkedAt = now() }
            try mark.save(store, source: source.name, key: key, runID: runID)
            if !page.hasMore { return .complete }
        }
    }

    // MARK: - Helpers

    private func isVerified(_ transactionID: String) throws -> Bool {
        var verified = false
        try store.query(
            "SELECT verification FROM transactions WHERE transaction_id = :id", parameters: ["id": .text(transactionID)]
        ) { _, row in
            verified = row[0].textValue == "verified"
        }
        return verified
    }

    private func quarantine(_ location: String, _ reason: String, _ raw: String, _ hash: String) -> QuarantinedRecord {
        QuarantinedRecord(
            sourceName: source.name, location: location, reason: reason,
            rawExcerpt: String(decoding: Array(raw.utf8).prefix(4096), as: UTF8.self), rawHash: hash)
    }

    static func isAppleTransactionID(_ id: String) -> Bool {
        !id.isEmpty && id.count <= 20 && id.allSatisfy { $0.isASCII && $0.isNumber }
    }

    static func iso(_ ms: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }
}
