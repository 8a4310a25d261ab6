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
    /// The run's window.
    let window: ApplePuller.PullWindow
    private(set) var budget: Int
    var summary: ApplePullSummary
    /// Calls that failed in a row; at ``failureLimit`` the source stops for this run (Apple is down or
    /// unreachable: spending the budget on retries would only delay the rest of the run).
    var consecutiveFailures = 0
    static let failureLimit = 3
    /// Calls that failed in this run, in a row or not; at ``totalFailureLimit`` the source stops too, so that
    /// failures alternating with successes (every other call hanging until its timeout) cannot stretch a run
    /// over hours.
    var totalFailures = 0
    static let totalFailureLimit = 10
    /// Pages in a row that said `hasMore` but held nothing; at ``emptyPageLimit`` the call fails (Apple is not
    /// making progress).
    static let emptyPageLimit = 3

    /// Apple keeps notification history this long (ms): 180 days in Production, 30 in Sandbox.
    static func historyLimit(_ environment: AppleEnvironment) -> Int64 {
        (environment == .sandbox ? 30 : 180) * 86_400_000
    }

    init(
        source: AppStoreAPIConfig, store: any PurchaseStore, runID: Int64, verifier: any AppleRecordVerifier,
        logger: Logger, now: @escaping @Sendable () -> Int64, shouldStop: @escaping () -> Bool,
        notificationOverlap: Int64, notFoundRecheck: Int64, window: ApplePuller.PullWindow = .init()
    ) {
        self.window = window
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
    func takeCall() -> Bool {
        guard canCall else { return false }
        budget -= 1
        summary.calls += 1
        return true
    }

    var canCall: Bool {
        budget > 0 && consecutiveFailures < Self.failureLimit && totalFailures < Self.totalFailureLimit
            && !shouldStop()
    }

    var outOfCalls: String {
        if shouldStop() { return "stop requested" }
        if consecutiveFailures >= Self.failureLimit { return "\(consecutiveFailures) calls in a row failed" }
        if totalFailures >= Self.totalFailureLimit { return "\(totalFailures) calls failed this run" }
        return "call budget spent"
    }

    func failed(_ message: String) {
        consecutiveFailures += 1
        totalFailures += 1
        summary.errors.append(message)
    }

    /// Why a page of signed records cannot be trusted as a whole, or `nil`: any record that failed
    /// verification, or that is for another app or environment than the one asked about. Such a page is not
    /// stored and its call fails, so the watermark stays and the next run asks again; a broken signature from
    /// Apple's own API is an error to look into, never a forgery to report.
    static func untrustedPage(
        _ sightings: [AppleSighting], quarantined: Int, total: Int, bundle: String, environment: AppleEnvironment
    ) -> String? {
        if quarantined > 0 { return "\(quarantined) of \(total) signed record(s) could not be read" }
        if let bad = sightings.first(where: { $0.verification.status != .verified }) {
            let count = sightings.filter { $0.verification.status != .verified }.count
            return
                "\(count) of \(total) signed record(s) failed verification (\(bad.verification.reason ?? "unverified"))"
        }
        if let other = sightings.first(where: {
            ($0.transaction.bundleID.map { $0 != bundle } ?? false)
                || ($0.transaction.environment.map { $0 != environment.rawValue } ?? false)
        }) {
            return
                "signed record(s) for another app or environment (\(other.transaction.bundleID ?? "?"), \(other.transaction.environment ?? "?")) than the one asked about"
        }
        return nil
    }

    /// Why a page of signed transactions is broken as an answer, or `nil`: more pages promised with the
    /// revision that was asked for, or with one this pull of the key already asked with or was given (the
    /// paging runs in a circle: A, B, A, …), ``emptyPageLimit`` empty pages in a row that promise more, or a
    /// page for another bundle or environment than the one asked about.
    static func brokenPage(
        _ page: SignedTransactionPage, askedRevision: String?, emptyPages: Int, bundle: String,
        environment: AppleEnvironment, seenRevisions: Set<String> = []
    ) -> String? {
        if page.hasMore, page.revision == askedRevision {
            return "more pages promised with the same revision (no progress)"
        }
        if page.hasMore, let revision = page.revision, seenRevisions.contains(revision) {
            return
                "more pages promised with a revision this pull already read (the paging runs in a circle; no progress)"
        }
        if emptyPages >= emptyPageLimit { return "\(emptyPages) empty pages in a row that promised more (no progress)" }
        if let answered = page.bundleID, answered != bundle { return "the answer is for bundle \(answered)" }
        if let answered = page.environment, answered != environment.rawValue {
            return "the answer is for environment \(answered)"
        }
        return nil
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

    /// The notification history window of one query for this run, from the run's window (never the wall
    /// clock alone): it ends at the run's `until` (a minute before now at the latest) and starts at the run's
    /// `since` when one was given; otherwise where the last completed window ended (less the overlap), or
    /// `lookback_days` before the end when nothing was read yet or the run's window ends before what was
    /// read (a backfill). Never before what Apple keeps.
    func notificationWindow(mark: PullWatermark, environment: AppleEnvironment) -> (start: Int64, end: Int64) {
        let wall = now()
        let appleOldest = wall - Self.historyLimit(environment) + 3_600_000
        let end = min(window.until ?? wall, wall - 60_000)
        let start: Int64
        if let since = window.since {
            start = since
        } else if let done = mark.doneThrough, done - notificationOverlap < end {
            start = done - notificationOverlap
        } else {
            start = end - Int64(source.lookbackDays) * 86_400_000
        }
        return (max(start, appleOldest), end)
    }

    /// Pulls notification history of one app, environment and type for the run's window.
    private func pullNotifications(bundle: String, client: AppStoreServerAPIClient, type: String?, key: String) throws {
        let environment = client.environment
        var mark = try PullWatermark.load(store, source: source.name, key: key) ?? PullWatermark()
        let nowMs = now()
        let appleOldest = nowMs - Self.historyLimit(environment) + 3_600_000
        var (start, end) = notificationWindow(mark: mark, environment: environment)
        var token: String?
        var emptyPages = 0
        // A window left unfinished by an earlier run resumes where it stopped, unless this run asks for other days.
        if let pending = mark.paginationToken, let s = mark.windowStart, let e = mark.windowEnd, s >= appleOldest,
            window.since == nil, e <= end
        {
            (start, end, token) = (s, e, pending)
        }
        guard start < end else { return }
        let what = "notification history of \(bundle) (\(environment.rawValue), \(type ?? "all types"))"
        // Every pagination token of this window asked with or given: one offered again means the pages run in a
        // circle (A, B, A, …).
        var seenTokens: Set<String> = []
        while true {
            if let token { seenTokens.insert(token) }
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
                seenTokens = []
                continue
            } catch {
                failed("\(what): \(error)")
                summary.left.append("\(what) from \(Self.iso(start)) to \(Self.iso(end)) (the call failed)")
                return
            }
            emptyPages = page.items.isEmpty && page.hasMore ? emptyPages + 1 : 0
            let noProgress =
                page.hasMore && page.paginationToken == token
                ? "more pages promised with the same paginationToken"
                : page.hasMore && page.paginationToken.map(seenTokens.contains) == true
                    ? "more pages promised with a paginationToken this window already read (the paging runs in a circle)"
                    : emptyPages >= Self.emptyPageLimit ? "\(emptyPages) empty pages in a row that promised more" : nil
            if let noProgress {
                failed("\(what): \(noProgress) (no progress)")
                summary.left.append("\(what) from \(Self.iso(start)) to \(Self.iso(end)) (the call failed)")
                return
            }
            var batch = IngestBatch()
            let location = "\(environment.rawValue) notification history"
            let parser = NotificationParser(sourceName: source.name, verifier: verifier)
            var unverified = 0
            for item in page.items {
                let hash = Hashing.sha256Hex(item.signedPayload)
                do {
                    let (notification, sighting) = try parser.parse(
                        JSONObject(["signedPayload": item.signedPayload]), payloadHash: hash, location: location)
                    if notification.verification.status != .verified { unverified += 1 }
                    batch.notifications.append(notification)
                    if let sighting { batch.sightings.append(sighting) }
                } catch let error as RecordError {
                    batch.quarantined.append(quarantine(location, error.message, item.signedPayload, hash))
                }
            }
            if !batch.quarantined.isEmpty || unverified > 0 {
                failed(
                    "\(what): \(unverified + batch.quarantined.count) of \(page.items.count) notification(s) failed verification or could not be read; the page is not stored"
                )
                summary.left.append("\(what) from \(Self.iso(start)) to \(Self.iso(end)) (the call failed)")
                return
            }
            // As for transaction history: a notification for another app or environment than the one asked
            // about (a Sandbox one in Production history) is not Apple's answer to this call.
            if let other = batch.notifications.first(where: {
                ($0.bundleID.map { $0 != bundle } ?? false)
                    || ($0.environment.map { $0 != environment.rawValue } ?? false)
            }) {
                failed(
                    "\(what): notification(s) for another app or environment (\(other.bundleID ?? "?"), \(other.environment ?? "?")) than the one asked about; the page is not stored"
                )
                summary.left.append("\(what) from \(Self.iso(start)) to \(Self.iso(end)) (the call failed)")
                return
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
                // Everything up to `end` is read only if this window joins what was read before (a backfill
                // of older days leaves a gap after the old mark for the next run to read).
                if let done = mark.doneThrough {
                    if start <= done { mark.doneThrough = max(done, end) }
                } else {
                    mark.doneThrough = end
                }
                mark.checkedAt = nowMs
            }
            // As for history pages: an empty page's token is used, not saved, until a page with items
            // (or the window's end) confirms it.
            if !page.items.isEmpty || !page.hasMore {
                try mark.save(store, source: source.name, key: key, runID: runID)
            }
            if token == nil || !page.hasMore { return }
        }
    }

    // MARK: - Transaction history

    /// The transaction ids the backend or Apple's notifications name that the store has not seen verified,
    /// with the app each belongs to as far as the store knows (its transaction, order, credit's order or
    /// notification), nil when nothing says.
    func transactionCandidates() throws -> [(id: String, bundle: String?)] {
        try Self.transactionCandidates(in: store)
    }

    /// ``transactionCandidates()`` of `store`.
    static func transactionCandidates(in store: any PurchaseStore) throws -> [(id: String, bundle: String?)] {
        var candidates: [(id: String, bundle: String?)] = []
        try store.query(
            """
            WITH named AS (
              SELECT transaction_id FROM credits WHERE transaction_id IS NOT NULL AND transaction_id <> ''
              UNION
              SELECT transaction_id FROM orders WHERE transaction_id IS NOT NULL AND transaction_id <> ''
              UNION
              SELECT transaction_id FROM notifications WHERE transaction_id IS NOT NULL AND transaction_id <> ''
            )
            SELECT n.transaction_id,
                   COALESCE(t.bundle_id,
                            (SELECT MIN(o.bundle_id) FROM orders o WHERE o.transaction_id = n.transaction_id),
                            (SELECT MIN(o.bundle_id) FROM credits c JOIN orders o ON o.order_id = c.order_id
                             WHERE c.transaction_id = n.transaction_id),
                            (SELECT MIN(m.bundle_id) FROM notifications m WHERE m.transaction_id = n.transaction_id))
            FROM named n
            LEFT JOIN transactions t ON t.transaction_id = n.transaction_id
            WHERE t.transaction_id IS NULL OR t.verification <> 'verified'
            ORDER BY n.transaction_id
            """, parameters: [:]
        ) { _, row in
            if let id = row[0].textValue { candidates.append((id, row[1].textValue)) }
        }
        return candidates
    }

    /// Pulls the history of the transactions of `bundle` (see ``transactionCandidates()``; those of no known
    /// app go with the first app) that the store has not seen verified. A transaction Apple does not find with
    /// its app's credentials is looked for with the other apps' (`others`, in order: a transaction of another
    /// app redeemed in this one) before it counts as not found.
    func pullTransactionHistory(
        bundle: String, clients: [AppStoreServerAPIClient],
        others: [(bundle: String, clients: [AppStoreServerAPIClient])],
        candidates all: [(id: String, bundle: String?)], isFirstApp: Bool
    ) throws {
        let known = Set([bundle] + others.map(\.bundle))
        let candidates = all.filter { $0.bundle == bundle || (isFirstApp && !known.contains($0.bundle ?? "")) }
            .map(\.id)
        let nowMs = now()
        let attempts = [(bundle, clients)] + others.map { ($0.bundle, $0.clients) }
        for (index, transactionID) in candidates.enumerated() {
            // Apple's transaction ids are decimal numbers; anything else (forged markers) is for the rules.
            guard Self.isAppleTransactionID(transactionID) else { continue }
            let key = "history/\(bundle)/\(transactionID)"
            if let mark = try PullWatermark.load(store, source: source.name, key: key), let notFound = mark.notFoundAt,
                nowMs - notFound < notFoundRecheck
            {
                try answered(transactionID)
                continue
            }
            if try isVerified(transactionID) {
                try answered(transactionID)
                continue
            }
            guard canCall else {
                summary.left.append(
                    "transaction history: \(candidates.count - index) transaction(s) of \(bundle) not checked (\(outOfCalls))"
                )
                for left in candidates[index...] where Self.isAppleTransactionID(left) {
                    try store.setUnchecked(
                        left, reason: "the pull stopped before asking (\(outOfCalls))", sourceName: source.name,
                        runID: runID)
                }
                return
            }
            var outcome = PagesResult.notFound
            search: for (app, appClients) in attempts {
                for client in appClients {
                    outcome = try pullSignedPages(
                        kind: .history, bundle: app, client: client, transactionID: transactionID,
                        key: "history/\(app)/\(client.environment.rawValue)/\(transactionID)")
                    if outcome != .notFound { break search }
                }
            }
            if outcome == .notFound {
                summary.transactionsNotFound.append(transactionID)
                var mark = PullWatermark()
                mark.notFoundAt = nowMs
                try mark.save(store, source: source.name, key: key, runID: runID)
            }
            if outcome == .incomplete, try !isVerified(transactionID) {
                let reason =
                    canCall
                    ? "Apple's answer could not be had (the call failed)"
                    : "the pull stopped before Apple answered (\(outOfCalls))"
                try store.setUnchecked(transactionID, reason: reason, sourceName: source.name, runID: runID)
            } else {
                try answered(transactionID)
            }
        }
    }

    /// Apple has answered about `transactionID` (found, or not found): it is no longer unchecked.
    private func answered(_ transactionID: String) throws {
        try store.setUnchecked(transactionID, reason: nil, sourceName: source.name, runID: runID)
    }

    // MARK: - Refund history

    /// One credited transaction the refund poll may ask about, and the Apple customer it belongs to.
    struct RefundCandidate {
        var transactionID: String
        var environment: AppleEnvironment
        /// Transactions of one Apple customer share it: the transaction whose history call returned this one
        /// (Apple answers with the customer's whole history), else the original transaction id.
        var customer: String
    }

    /// Polls refund history of `bundle`'s customers: every customer with activity since the last poll (a
    /// transaction, credit or order written, or a notification received, after the run the poll last
    /// covered), least recently checked first; then a rolling sweep over the credited, verified transactions
    /// in id order, at most ``AppStoreAPIConfig/Pull/refundSweepCalls(maxCallsPerRun:)`` customers per run,
    /// skipping customers already polled in the current sweep cycle. Each Apple customer is asked once per
    /// run, whichever transaction or backend user names it.
    func pullRefundHistory(bundle: String, clients: [AppleEnvironment: AppStoreServerAPIClient]) throws {
        // A source that stopped (budget, failures, stop request) leaves the poll as it was.
        guard canCall else { return }
        let cursorKey = "refunds/\(bundle)/cursor"
        var cursor = try PullWatermark.load(store, source: source.name, key: cursorKey) ?? PullWatermark()
        let nowMs = now()
        var polled = Set<String>()
        var activeLeft = false
        var due: [(candidate: RefundCandidate, checkedAt: Int64)] = []
        // Before the first poll every customer is the sweep's: a first run must not poll everyone at once.
        if let since = cursor.activityAfterRun {
            for candidate in try refundCandidates(
                bundle: bundle, clients: clients,
                filter: """
                    t.transaction_id IN (
                        SELECT transaction_id FROM transactions WHERE last_run_id > :since
                        UNION SELECT transaction_id FROM credits WHERE last_run_id > :since
                        UNION SELECT transaction_id FROM orders WHERE last_run_id > :since
                        UNION SELECT transaction_id FROM notifications WHERE first_run_id > :since)
                    """, parameters: ["since": .integer(since)], limit: nil
            ).candidates
            where polled.insert(candidate.customer).inserted {
                let mark = try PullWatermark.load(
                    store, source: source.name, key: refundKey(bundle, candidate.environment, candidate.customer))
                due.append((candidate, mark?.checkedAt ?? Int64.min))
            }
        }
        due.sort { ($0.checkedAt, $0.candidate.customer) < ($1.checkedAt, $1.candidate.customer) }
        for (index, entry) in due.enumerated() {
            guard let client = clients[entry.candidate.environment] else { continue }
            guard canCall else {
                summary.left.append(
                    "refund history: \(due.count - index) active customer(s) of \(bundle) not checked this run (\(outOfCalls))"
                )
                return  // the activity mark stays: the rest are due again next run
            }
            summary.refundCustomers += 1
            let result = try pullSignedPages(
                kind: .refunds, bundle: bundle, client: client, transactionID: entry.candidate.transactionID,
                key: refundKey(bundle, entry.candidate.environment, entry.candidate.customer))
            if result == .incomplete { activeLeft = true }
        }
        // Writes of this run after this point are activity for the next run; a customer whose poll failed is
        // due again.
        if !activeLeft { cursor.activityAfterRun = runID - 1 }

        // The rolling sweep: on from where the last run stopped; at the end of the population a new cycle
        // starts from the beginning (in this run, if it started mid-way).
        let sweepCalls = source.pull.refundSweepCalls(maxCallsPerRun: source.maxCallsPerRun)
        var cycleStart = cursor.sweepStartedAt ?? nowMs
        var after = cursor.sweepAfter ?? ""
        var swept = 0
        passes: for _ in 0..<2 {
            let startedMidway = !after.isEmpty
            let batch = try refundCandidates(
                bundle: bundle, clients: clients, filter: "t.transaction_id > :after",
                parameters: ["after": .text(after)], limit: sweepCalls)
            for candidate in batch.candidates {
                let key = refundKey(bundle, candidate.environment, candidate.customer)
                let checked = try PullWatermark.load(store, source: source.name, key: key)?.checkedAt
                if polled.contains(candidate.customer) || (checked.map { $0 >= cycleStart } ?? false) {
                    after = candidate.transactionID
                    continue
                }
                guard swept < sweepCalls, canCall, let client = clients[candidate.environment] else { break passes }
                swept += 1
                summary.refundCustomers += 1
                polled.insert(candidate.customer)
                let result = try pullSignedPages(
                    kind: .refunds, bundle: bundle, client: client, transactionID: candidate.transactionID, key: key)
                if result == .incomplete { break passes }
                after = candidate.transactionID
            }
            // Past the rows no client can ask about (another environment, not Apple's ids) as well.
            after = max(after, batch.lastID ?? after)
            guard batch.rows < sweepCalls else { break }
            after = ""
            cycleStart = nowMs
            if !startedMidway || swept >= sweepCalls { break }
        }
        cursor.sweepAfter = after.isEmpty ? nil : after
        cursor.sweepStartedAt = after.isEmpty ? nil : cycleStart
        cursor.checkedAt = nowMs
        try cursor.save(store, source: source.name, key: cursorKey, runID: runID)
    }

    /// Credited, verified transactions of `bundle` matching `filter` (SQL over `transactions t`), in
    /// transaction id order, at most `limit` rows: those in an environment that has a client, each with its
    /// customer, and how many rows were read and the last row's id.
    func refundCandidates(
        bundle: String, clients: [AppleEnvironment: AppStoreServerAPIClient], filter: String,
        parameters: [String: SQLValue], limit: Int?
    ) throws -> (candidates: [RefundCandidate], rows: Int, lastID: String?) {
        var rows: [(String, String?, String)] = []
        var sql = """
            SELECT t.transaction_id, t.original_transaction_id, t.environment
            FROM transactions t
            WHERE \(filter)
              AND t.verification = 'verified' AND t.bundle_id = :bundle
              AND EXISTS (SELECT 1 FROM credits c WHERE c.transaction_id = t.transaction_id AND c.user_id IS NOT NULL)
            ORDER BY t.transaction_id
            """
        var bound = parameters
        bound["bundle"] = .text(bundle)
        if let limit {
            sql += " LIMIT :limit"
            bound["limit"] = .integer(Int64(limit))
        }
        try store.query(sql, parameters: bound) { _, row in
            if let id = row[0].textValue, let environment = row[2].textValue {
                rows.append((id, row[1].textValue, environment))
            }
        }
        var out: [RefundCandidate] = []
        for (id, original, environmentText) in rows {
            guard let environment = AppleEnvironment(appleValue: environmentText), clients[environment] != nil,
                Self.isAppleTransactionID(id)
            else { continue }
            let customer = try historyCall(returning: id) ?? original ?? id
            out.append(RefundCandidate(transactionID: id, environment: environment, customer: customer))
        }
        return (out, rows.count, rows.last?.0)
    }

    /// The transaction id whose history call returned `transactionID` from this source, if one did.
    private func historyCall(returning transactionID: String) throws -> String? {
        var location: String?
        try store.query(
            """
            SELECT MIN(source_ref) FROM sightings
            WHERE transaction_id = :id AND source_kind = 'api' AND source_name = :source AND source_ref LIKE :pattern
            """,
            parameters: [
                "id": .text(transactionID), "source": .text(source.name),
                "pattern": .text("% \(PageKind.history.rawValue) %"),
            ]
        ) { _, row in location = row[0].textValue }
        guard let location, let queried = location.split(separator: " ").last else { return nil }
        return String(queried)
    }

    private func refundKey(_ bundle: String, _ environment: AppleEnvironment, _ customer: String) -> String {
        "refunds/\(bundle)/\(environment.rawValue)/\(customer)"
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
        var emptyPages = 0
        // Every revision this pull asked with or was given: one offered again means the pages run in a circle.
        var seenRevisions: Set<String> = []
        while true {
            if let asked = mark.revision { seenRevisions.insert(asked) }
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
            // An answer that makes no progress (the same revision again, or empty pages that keep promising
            // more) is broken: without this the pull would spend its whole budget on one key.
            emptyPages = page.signedTransactions.isEmpty && page.hasMore ? emptyPages + 1 : 0
            if let problem = Self.brokenPage(
                page, askedRevision: mark.revision, emptyPages: emptyPages, bundle: bundle,
                environment: client.environment, seenRevisions: seenRevisions)
            {
                failed("\(what): \(problem)")
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
            if let why = Self.untrustedPage(
                batch.sightings, quarantined: batch.quarantined.count, total: page.signedTransactions.count,
                bundle: bundle, environment: client.environment)
            {
                failed("\(what): \(why); the page is not stored")
                summary.left.append("\(what) (the call failed)")
                return .incomplete
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
            // An empty page that promises more only moves the revision asked with next: saved, it would let
            // the next run start past pages this run never read if the pages after it fail.
            if !page.signedTransactions.isEmpty || !page.hasMore {
                try mark.save(store, source: source.name, key: key, runID: runID)
            }
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

    func quarantine(_ location: String, _ reason: String, _ raw: String, _ hash: String) -> QuarantinedRecord {
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
