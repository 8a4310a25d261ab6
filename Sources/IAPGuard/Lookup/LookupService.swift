/// Answers a support lookup from the store, read-only, through the documented views (`transactions`,
/// `sightings`, `orders`, `credits`, `notifications`, `refunds`, `catalog`, `testers`, `fx_rates`, `runs`,
/// `findings`): resolves the id against every kind, gathers the evidence, judges each purchase
/// (``ClaimVerdict``), and adds the timeline, findings, user profiles and consumption drafts.
public struct LookupService {
    /// At most this many transactions are judged in one lookup (a very active user); the rest is noted.
    public static let maxTransactions = 1000
    /// At most this many timeline events are returned.
    public static let maxTimelineEvents = 2000

    let reader: LookupStoreReader
    /// The config's reference currency (spend and money at risk are expressed in it).
    public var referenceCurrency: String
    /// Apple's Look Up Order ID, when the App Store Server API is configured.
    public var appleOrderLookup: (any AppleOrderLookup)?
    /// Hours after a purchase before a missing credit is reported (IAP-014's `grace_hours`).
    public var graceHours: Int64
    /// IAP-014's `renewal_credit_share`: an app whose backend credits fewer than this share of its subscription
    /// renewals credits each subscription once; its renewals are owed no credit of their own.
    public var renewalCreditShare: Double = 0.2
    /// IAP-014's `clock_skew_minutes`: a subscription credit reversed up to this many minutes before Apple's
    /// expiry of its period was credited for all of it.
    public var clockSkewMinutes: Int64 = 15
    /// IAP-022's `unpaid_statuses`: a credited order in one of these statuses was never paid.
    public var unpaidOrderStatuses = UnpaidOrderStatuses.ruleDefault
    /// Two purchases of the same product by the same account closer than this are "charged twice".
    public var chargedTwiceWindowMillis: Int64 = 3_600_000
    /// The judging time; `nil`: the last run's `--until`, else the wall clock.
    public var now: Int64?

    public init(
        store: any PurchaseStore, referenceCurrency: String = "USD", appleOrderLookup: (any AppleOrderLookup)? = nil,
        graceHours: Int64 = 24, now: Int64? = nil
    ) {
        self.reader = LookupStoreReader(store: store)
        self.referenceCurrency = referenceCurrency
        self.appleOrderLookup = appleOrderLookup
        self.graceHours = graceHours
        self.now = now
    }

    /// What one kind of id matched.
    struct Resolution {
        var transactionIDs: [String] = []
        var orderIDs: [String] = []
        var userIDs: [String] = []
        var matched: String?
        var notes: [String] = []
    }

    /// Runs the lookup. Throws only when the store cannot be read; "not found" is a result with `found == false`.
    public func lookup(_ query: LookupQuery) throws -> LookupResult {
        let lastRun = try reader.lastRun()
        let asOf = now ?? lastRun?.windowUntil ?? Clock.nowMillis()
        var result = LookupResult(
            query: .init(id: query.id, kind: query.kind, kindsTried: query.kindsToTry, matches: []), found: false,
            asOf: asOf, referenceCurrency: referenceCurrency, lastRun: lastRun)

        var transactionIDs = OrderedIDs()
        var orderIDs = OrderedIDs()
        var userIDs = OrderedIDs()
        var appleOrderNotes: [String] = []
        for kind in query.kindsToTry {
            let resolution = try resolve(query.id, as: kind)
            if kind == .appleOrder && resolution.matched == nil {
                appleOrderNotes = resolution.notes
            } else {
                result.notes += resolution.notes
            }
            guard let matched = resolution.matched else { continue }
            result.query.matches.append(.init(kind: kind, matched: matched))
            transactionIDs.add(resolution.transactionIDs)
            orderIDs.add(resolution.orderIDs)
            userIDs.add(resolution.userIDs)
        }
        // Why an Apple order ID could not be resolved matters only when nothing else matched, or it was asked for.
        if result.query.matches.isEmpty || query.kind == .appleOrder { result.notes += appleOrderNotes }
        guard !result.query.matches.isEmpty else {
            try fillNotFound(&result, query: query)
            return result
        }
        result.found = true
        if transactionIDs.count > Self.maxTransactions {
            result.truncated = true
            result.notes.append(
                "Only the first \(Self.maxTransactions) of \(transactionIDs.count) transactions are judged.")
            transactionIDs = OrderedIDs(Array(transactionIDs.values.prefix(Self.maxTransactions)))
        }

        var context = try loadContext(transactionIDs: transactionIDs.values, orderIDs: orderIDs.values, at: asOf)
        let twins = try chargedTwiceTwins(of: transactionIDs.values, context: context, at: asOf)
        let missing = Set(twins.flatMap { [$0.0, $0.1] }).subtracting(context.transactionsByID.keys)
        if !missing.isEmpty {
            context = try loadContext(
                transactionIDs: transactionIDs.values + missing.sorted(), orderIDs: orderIDs.values, at: asOf)
        }
        result.evidence = context.evidence

        let judge = ClaimVerdictJudge(context: context)
        for id in transactionIDs.values { if let verdict = judge.verdict(for: id) { result.verdicts.append(verdict) } }
        let judged = Set(transactionIDs.values)
        for order in context.evidence.orders where orderIDs.contains(order.orderID) && order.transactionID == nil {
            let verdict = judge.verdict(forOrder: order)
            // An order judged by the transaction its credit names shares that transaction's verdict.
            guard let tx = verdict.transactionID,
                let index = result.verdicts.firstIndex(where: { $0.transactionID == tx })
            else {
                result.verdicts.append(verdict)
                continue
            }
            for id in verdict.orderIDs where !result.verdicts[index].orderIDs.contains(id) {
                result.verdicts[index].orderIDs.append(id)
            }
            for detail in verdict.details where !result.verdicts[index].details.contains(detail) {
                result.verdicts[index].details.append(detail)
            }
        }
        result.verdicts += twins.map { chargedTwiceVerdict($0.0, $0.1, context: context) }
        // The other purchase of a pair gets its own verdict too, the one a lookup of its own id gives.
        for id in OrderedIDs(twins.flatMap { [$0.0, $0.1] }).values where !judged.contains(id) {
            if let verdict = judge.verdict(for: id) { result.verdicts.append(verdict) }
        }

        let involvedUsers = Set(result.verdicts.flatMap { $0.creditedTo + [$0.paidBy].compactMap { $0 } })
        let originals = Set(context.evidence.transactions.compactMap(\.originalTransactionID))
        result.findings = try reader.findings(
            transactionIDs: transactionIDs.values + twins.flatMap { [$0.0, $0.1] }, originalIDs: originals.sorted(),
            orderIDs: orderIDs.values, userIDs: involvedUsers.sorted(), allFindingsUserIDs: userIDs.values)
        // A finding about another account of the same Apple Account that names one of these accounts (a refund
        // farm is one IAP-016 finding under its latest account).
        let named = try reader.findingsNaming(
            ["user_id": Set(userIDs.values).union(involvedUsers)],
            throughAppleAccounts: OrderedIDs(context.evidence.transactions.compactMap(\.appTransactionID)).values,
            excluding: Set(result.findings.map(\.findingID)))
        if !named.isEmpty {
            result.findings = (result.findings + named).sorted(by: LookupStoreReader.listedBefore)
        }
        for index in result.verdicts.indices { result.verdicts[index].note(findings: result.findings) }

        let fx = try FXTable(store: reader.store)
        let profiles = UserProfileBuilder(context: context, fx: fx, referenceCurrency: referenceCurrency)
        let accounts = try reader.accounts(userIDs.values)
        result.users = userIDs.values.map { id in
            var profile = profiles.profile(for: id)
            profile.account = accounts[id]
            return profile
        }
        result.consumptionDrafts = try consumptionDrafts(
            context: context, scope: judged, query: query, fx: fx, profiles: result.users)

        var timeline = TimelineBuilder(context: context).build()
        if timeline.count > Self.maxTimelineEvents {
            result.notes.append("The timeline shows the latest \(Self.maxTimelineEvents) of \(timeline.count) events.")
            timeline = Array(timeline.suffix(Self.maxTimelineEvents))
        }
        result.timeline = timeline
        result.answer = answer(for: result)
        return result
    }

    // MARK: Resolution

    func resolve(_ id: String, as kind: IDKind) throws -> Resolution {
        // Apple's transaction ids have no leading zeros (the store keeps a backend's padded copy unpadded).
        guard kind == .transaction || kind == .original else { return try resolve(key: id, as: kind) }
        let key = AppleTransaction.unpaddedID(id)
        var r = try resolve(key: key, as: kind)
        if r.matched != nil, key != id, kind == .transaction {
            r.notes.append("\(id) is read as transaction \(key): Apple's transaction ids have no leading zeros.")
        }
        return r
    }

    /// What `id`, taken as it is, matches as `kind`.
    func resolve(key id: String, as kind: IDKind) throws -> Resolution {
        let p: [String: SQLValue] = ["id": .text(id)]
        var r = Resolution()
        switch kind {
        case .transaction:
            let sources = try reader.rows(
                """
                SELECT 'Apple transaction' AS source FROM transactions WHERE transaction_id = :id
                UNION ALL SELECT 'failed copy' FROM sightings WHERE transaction_id = :id AND verification = 'failed'
                UNION ALL SELECT 'credit' FROM credits WHERE transaction_id = :id
                UNION ALL SELECT 'order' FROM orders WHERE transaction_id = :id
                """, p
            ).compactMap { $0.text("source") }
            if !sources.isEmpty {
                r.transactionIDs = [id]
                r.matched = Self.counted(sources)
            }
        case .original:
            r.transactionIDs = try reader.rows(
                """
                SELECT transaction_id FROM transactions WHERE original_transaction_id = :id
                UNION SELECT transaction_id FROM sightings WHERE original_transaction_id = :id
                ORDER BY 1
                """, p
            ).compactMap { $0.text("transaction_id") }
            if !r.transactionIDs.isEmpty { r.matched = Self.plural(r.transactionIDs.count, "transaction") }
        case .order:
            let orders = try reader.rows("SELECT transaction_id FROM orders WHERE order_id = :id", p)
            let credits = try reader.rows("SELECT transaction_id FROM credits WHERE order_id = :id", p)
            let submitted = try reader.rows(
                "SELECT DISTINCT transaction_id FROM sightings WHERE submitted_order_id = :id", p)
            // A backend credit id: the credit's transaction, its order and the order's transaction.
            let credit = try reader.rows(
                """
                SELECT c.transaction_id, c.order_id, c.user_id, o.transaction_id AS order_transaction_id
                FROM credits c LEFT JOIN orders o ON o.order_id = c.order_id
                WHERE c.credit_id = :id
                """, p)
            if orders.isEmpty, credits.isEmpty, submitted.isEmpty, !credit.isEmpty {
                r.orderIDs = OrderedIDs(credit.compactMap { $0.text("order_id") }).values
                r.transactionIDs =
                    OrderedIDs(
                        credit.compactMap { $0.text("transaction_id") }
                            + credit.compactMap { $0.text("order_transaction_id") }
                    ).values
                let users = OrderedIDs(credit.compactMap { $0.text("user_id") }).values
                var parts = ["credit \(id)" + (users.isEmpty ? "" : " of " + users.joined(separator: ", "))]
                if !r.transactionIDs.isEmpty {
                    parts.append(
                        (r.transactionIDs.count == 1 ? "transaction " : "transactions ")
                            + r.transactionIDs.joined(separator: ", "))
                }
                if !r.orderIDs.isEmpty {
                    parts.append((r.orderIDs.count == 1 ? "order " : "orders ") + r.orderIDs.joined(separator: ", "))
                }
                r.matched = parts.joined(separator: ", ")
                if r.transactionIDs.isEmpty && r.orderIDs.isEmpty {
                    r.notes.append("Credit \(id) names no transaction and no order: there is no purchase to judge.")
                }
            } else if !orders.isEmpty || !credits.isEmpty || !submitted.isEmpty {
                r.orderIDs = [id]
                r.transactionIDs =
                    OrderedIDs((orders + credits + submitted).compactMap { $0.text("transaction_id") })
                    .values
                var parts: [String] = []
                if !orders.isEmpty { parts.append("order") }
                if !credits.isEmpty { parts.append(Self.plural(credits.count, "credit")) }
                if !submitted.isEmpty { parts.append(Self.plural(submitted.count, "submitted transaction")) }
                r.matched = parts.joined(separator: ", ")
            }
        case .user:
            let orders = try reader.rows(
                "SELECT order_id, transaction_id, app_account_token FROM orders WHERE user_id = :id ORDER BY created_at, order_id",
                p)
            let credits = try reader.rows(
                "SELECT transaction_id, order_id FROM credits WHERE user_id = :id ORDER BY credited_at, credit_id", p)
            let submitted = try reader.rows(
                "SELECT DISTINCT transaction_id FROM sightings WHERE submitted_by_user_id = :id ORDER BY 1", p)
            // The accounts source knows accounts that never bought anything, and the token it gives them.
            let account = try reader.accounts([id])[id]
            guard !orders.isEmpty || !credits.isEmpty || !submitted.isEmpty || account != nil else { break }
            var tokenParameters: [String: SQLValue] = [:]
            let tokens = Array(
                Set(
                    orders.compactMap { $0.text("app_account_token")?.lowercased() }
                        + [account?.appAccountToken?.lowercased()].compactMap { $0 })
            ).sorted()
            let list = LookupStoreReader.inList(tokens, prefix: "k", into: &tokenParameters)
            let viaToken = try reader.rows(
                "SELECT transaction_id FROM transactions WHERE LOWER(app_account_token) IN \(list) ORDER BY purchase_date",
                tokenParameters)
            r.userIDs = [id]
            r.orderIDs =
                OrderedIDs(orders.compactMap { $0.text("order_id") } + credits.compactMap { $0.text("order_id") })
                .values
            let own = OrderedIDs(
                (orders + credits + submitted + viaToken).compactMap { $0.text("transaction_id") }
            ).values
            // The renewals of the user's subscriptions: a backend that credits a subscription once has no order or
            // credit of theirs to find them by.
            var renewalParameters: [String: SQLValue] = [:]
            let ownList = LookupStoreReader.inList(own, prefix: "t", into: &renewalParameters)
            let renewals = try reader.rows(
                """
                SELECT r.transaction_id FROM transactions r
                WHERE r.original_transaction_id IN (SELECT t.original_transaction_id FROM transactions t
                                                    WHERE t.transaction_id IN \(ownList))
                  AND r.transaction_id <> r.original_transaction_id
                  AND COALESCE(r.in_app_ownership_type, 'PURCHASED') <> 'FAMILY_SHARED'
                ORDER BY r.purchase_date, r.transaction_id
                """, renewalParameters)
            r.transactionIDs = OrderedIDs(own + renewals.compactMap { $0.text("transaction_id") }).values
            r.matched = [
                orders.isEmpty ? nil : Self.plural(orders.count, "order"),
                credits.isEmpty ? nil : Self.plural(credits.count, "credit"),
                submitted.isEmpty ? nil : Self.plural(submitted.count, "submitted transaction"),
                viaToken.isEmpty || !orders.isEmpty
                    ? nil : Self.plural(viaToken.count, "transaction") + " with its token",
                account.map { "account record \($0.source)" },
            ].compactMap { $0 }.joined(separator: ", ")
        case .token:
            let transactions = try reader.rows(
                "SELECT transaction_id FROM transactions WHERE LOWER(app_account_token) = LOWER(:id) ORDER BY purchase_date",
                p)
            let orders = try reader.rows(
                "SELECT order_id, transaction_id FROM orders WHERE LOWER(app_account_token) = LOWER(:id) ORDER BY created_at",
                p)
            if transactions.isEmpty, orders.isEmpty {
                // A token only the accounts source knows: its account, with whatever that account has.
                let owners = try reader.accountsWithToken(id)
                guard !owners.isEmpty else { break }
                for owner in owners {
                    let account = try resolve(owner, as: .user)
                    r.transactionIDs = OrderedIDs(r.transactionIDs + account.transactionIDs).values
                    r.orderIDs = OrderedIDs(r.orderIDs + account.orderIDs).values
                    r.userIDs.append(owner)
                }
                r.matched = "the token of account " + owners.joined(separator: ", ") + " in the accounts source"
            } else {
                r.orderIDs = orders.compactMap { $0.text("order_id") }
                r.transactionIDs = OrderedIDs((transactions + orders).compactMap { $0.text("transaction_id") }).values
                r.matched = [
                    transactions.isEmpty ? nil : Self.plural(transactions.count, "transaction"),
                    orders.isEmpty ? nil : Self.plural(orders.count, "order"),
                ].compactMap { $0 }.joined(separator: ", ")
            }
        case .appTransaction:
            // One Apple Account's transactions: the canonical rows, failed copies, and app-level
            // notifications that name the account but no transaction.
            let transactions = try reader.rows(
                """
                SELECT transaction_id, MIN(purchase_date) AS purchased FROM (
                    SELECT transaction_id, purchase_date FROM transactions WHERE app_transaction_id = :id
                    UNION ALL SELECT transaction_id, purchase_date FROM sightings WHERE app_transaction_id = :id
                ) a GROUP BY transaction_id ORDER BY purchased, transaction_id
                """, p)
            let notifications = try reader.rows(
                "SELECT notification_uuid FROM notifications WHERE app_transaction_id = :id AND transaction_id IS NULL",
                p)
            if !transactions.isEmpty || !notifications.isEmpty {
                r.transactionIDs = transactions.compactMap { $0.text("transaction_id") }
                r.matched = [
                    transactions.isEmpty ? nil : Self.plural(transactions.count, "transaction"),
                    notifications.isEmpty ? nil : Self.plural(notifications.count, "app notification"),
                ].compactMap { $0 }.joined(separator: ", ")
            }
        case .appleOrder:
            guard let appleOrderLookup else {
                r.notes.append(
                    "Apple order IDs (from the customer's receipt e-mail) are resolved with the App Store Server API's Look Up Order ID, which is not configured; the store has no Apple order ID column."
                )
                break
            }
            do {
                let answer = try appleOrderLookup.lookUpOrderID(id)
                if answer.isValid && !answer.transactionIDs.isEmpty {
                    r.transactionIDs = answer.transactionIDs
                    r.matched = "Apple order with " + Self.plural(answer.transactionIDs.count, "transaction")
                    var known = Set<String>()
                    var parameters: [String: SQLValue] = [:]
                    let list = LookupStoreReader.inList(answer.transactionIDs, prefix: "t", into: &parameters)
                    for row in try reader.rows(
                        """
                        SELECT transaction_id FROM transactions WHERE transaction_id IN \(list)
                        UNION SELECT transaction_id FROM sightings WHERE transaction_id IN \(list)
                        UNION SELECT transaction_id FROM credits WHERE transaction_id IN \(list)
                        """, parameters)
                    {
                        if let tx = row.text("transaction_id") { known.insert(tx) }
                    }
                    for tx in answer.transactionIDs where !known.contains(tx) {
                        r.notes.append(
                            "Apple lists transaction \(tx) in this order, but the store has no record of it: it may not have been pulled yet."
                        )
                    }
                }
            } catch {
                r.notes.append("Look Up Order ID failed: \(error)")
            }
        }
        return r
    }

    // MARK: Evidence

    func loadContext(transactionIDs: [String], orderIDs: [String], at now: Int64) throws -> LookupContext {
        var evidence = LookupEvidence()
        // The families (same original id) of the transactions: restores, renewals, family-shared copies.
        let base = try reader.transactions(transactionIDs)
        var parameters: [String: SQLValue] = [:]
        let originals = Array(Set(base.compactMap(\.originalTransactionID))).sorted()
        let list = LookupStoreReader.inList(originals, prefix: "g", into: &parameters)
        let family = try reader.rows(
            "SELECT transaction_id FROM transactions WHERE original_transaction_id IN \(list) OR transaction_id IN \(list) ORDER BY purchase_date LIMIT \(Self.maxTransactions)",
            parameters
        ).compactMap { $0.text("transaction_id") }
        let all = OrderedIDs(transactionIDs + family).values
        evidence.transactions = try reader.transactions(all)
        evidence.sightings = try reader.sightings(all)
        // Orders and credits of the originals too: a restore's original may have been credited before its
        // Apple record reached the store.
        let credited = OrderedIDs(all + originals).values
        evidence.orders = try reader.orders(orderIDs: orderIDs, transactionIDs: credited)
        evidence.credits = try reader.credits(
            transactionIDs: credited, orderIDs: OrderedIDs(orderIDs + evidence.orders.map(\.orderID)).values)
        evidence.notifications = try reader.notifications(transactionIDs: all)
        evidence.refunds = try reader.refunds(transactionIDs: all)
        // The tokens copies carried too: a copy received before a credit may carry a token Apple's record no
        // longer does.
        let tokens = Set(
            (evidence.transactions.compactMap(\.appAccountToken) + evidence.orders.compactMap(\.appAccountToken)
                + evidence.sightings.compactMap(\.appAccountToken)).map { $0.lowercased() })
        var context = LookupContext(
            evidence: evidence, now: now, graceMillis: graceHours * 3_600_000, catalogUnits: try reader.catalogUnits(),
            apps: try reader.apps(),
            testers: try reader.testers(), tokenOwners: try reader.tokenOwners(tokens.sorted()))
        context.renewalCreditShare = renewalCreditShare
        context.unpaidOrderStatuses = unpaidOrderStatuses
        context.clockSkewMillis = clockSkewMinutes * 60_000
        context.noteClawbacks(
            try reader.clawbacks(
                transactionIDs: credited,
                orderIDs: OrderedIDs(orderIDs + evidence.orders.map(\.orderID)).values))
        context.tokenUse = try reader.tokenUse(tokens.sorted())
        let renewed = evidence.transactions.filter {
            $0.productType == "Auto-Renewable Subscription" && $0.originalTransactionID != $0.transactionID
        }
        context.renewalCrediting = try reader.renewalCrediting(
            bundles: Array(Set(renewed.compactMap(\.bundleID))).sorted(), now: now, graceMillis: graceHours * 3_600_000)
        return context
    }

    // MARK: Charged twice

    /// Pairs (earlier, later) of distinct real purchases of the same product by the same payer within
    /// ``chargedTwiceWindowMillis``, at least one of them in `transactionIDs`. The store is asked for
    /// candidates tied to the payer by Apple Account, order, submission or token; a candidate is kept only when
    /// ``LookupContext/samePayer(_:_:)`` holds (the same Apple Account when both name one, else the same
    /// ordering account), so a pair is found, and read, the same from either of its transactions. A pair with a
    /// third purchase of the product by the same payer within the window of either member is a series the
    /// customer chose (ten packs in a minute), not a double charge: it is no pair.
    func chargedTwiceTwins(of transactionIDs: [String], context: LookupContext, at now: Int64) throws -> [(
        String, String
    )] {
        var pairs = Set<[String]>()
        for id in transactionIDs {
            for other in try chargedTwiceCandidates(of: id, context: context) { pairs.insert([id, other].sorted()) }
        }
        // Judge each candidate pair on its own evidence, loaded when the lookup's does not hold it.
        let involved = Set(pairs.flatMap { $0 })
        let pairContext =
            involved.isSubset(of: context.transactionsByID.keys)
            ? context : try loadContext(transactionIDs: involved.sorted(), orderIDs: [], at: now)
        // Every member's own candidates, whichever id was looked up: a third one makes the pair a series.
        var neighbours: [String: [String]] = [:]
        for id in involved.sorted() { neighbours[id] = try chargedTwiceCandidates(of: id, context: pairContext) }
        let widened = involved.union(neighbours.values.joined())
        let judged =
            widened.isSubset(of: pairContext.transactionsByID.keys)
            ? pairContext : try loadContext(transactionIDs: widened.sorted(), orderIDs: [], at: now)
        // A charge Apple already refunded (not undone) left the customer nothing to claim: not charged twice.
        func refunded(_ id: String) -> Bool {
            guard let refund = judged.decisiveRefund(id) else { return false }
            return refund.eventType != "REFUND_REVERSED"
        }
        func inSeries(_ pair: [String]) -> Bool {
            let others = Set(pair.flatMap { neighbours[$0] ?? [] }).subtracting(pair)
            return others.contains { other in pair.contains { judged.samePayer($0, other) } }
        }
        pairs = pairs.filter {
            judged.samePayer($0[0], $0[1]) && !refunded($0[0]) && !refunded($0[1]) && !inSeries($0)
        }
        return pairs.sorted { $0.lexicographicallyPrecedes($1) }.map { pair in
            let a = judged.transactionsByID[pair[0]]?.purchaseDate ?? 0
            let b = judged.transactionsByID[pair[1]]?.purchaseDate ?? 0
            return a <= b ? (pair[0], pair[1]) : (pair[1], pair[0])
        }
    }

    /// The other real purchases of `id`'s product within ``chargedTwiceWindowMillis`` of it that the store
    /// ties to its payer (Apple Account, order, submission or token); the caller checks the payer is the same.
    func chargedTwiceCandidates(of id: String, context: LookupContext) throws -> [String] {
        guard let t = context.transactionsByID[id], t.environment == "Production",
            ["verified", "not-signed"].contains(t.verification), t.inAppOwnershipType != "FAMILY_SHARED",
            t.transactionReason != "RENEWAL", let product = t.productID, let at = t.purchaseDate,
            let payer = context.payer(of: id)?.user
        else { return [] }
        let rows = try reader.rows(
            """
            SELECT t.transaction_id FROM transactions t
            WHERE t.product_id = :product AND t.transaction_id <> :id
              AND t.purchase_date BETWEEN :from AND :to
              AND COALESCE(t.original_transaction_id, t.transaction_id) <> :original
              AND t.environment = 'Production' AND t.verification IN ('verified', 'not-signed')
              AND COALESCE(t.in_app_ownership_type, 'PURCHASED') <> 'FAMILY_SHARED'
              AND COALESCE(t.transaction_reason, 'PURCHASE') <> 'RENEWAL'
              AND ((:account <> '' AND t.app_transaction_id = :account)
                   OR EXISTS (SELECT 1 FROM orders o WHERE o.transaction_id = t.transaction_id AND o.user_id = :payer)
                   OR EXISTS (SELECT 1 FROM sightings s WHERE s.transaction_id = t.transaction_id
                              AND s.submitted_by_user_id = :payer)
                   OR (:token <> '' AND LOWER(t.app_account_token) = :token))
            ORDER BY t.purchase_date, t.transaction_id
            """,
            [
                "product": .text(product), "id": .text(id), "from": .integer(at - chargedTwiceWindowMillis),
                "to": .integer(at + chargedTwiceWindowMillis),
                "original": .text(t.originalTransactionID ?? id), "payer": .text(payer),
                "token": .text(t.appAccountToken?.lowercased() ?? ""),
                "account": .text(t.appTransactionID ?? ""),
            ])
        return rows.compactMap { $0.text("transaction_id") }
    }

    func chargedTwiceVerdict(_ first: String, _ second: String, context: LookupContext) -> ClaimVerdict {
        let a = context.transactionsByID[first]
        let b = context.transactionsByID[second]
        let gap = abs((b?.purchaseDate ?? 0) - (a?.purchaseDate ?? 0)) / 60_000
        let payers = OrderedIDs([first, second].compactMap { context.payer(of: $0)?.user }).values
        let payer = payers.first
        let appleAccount = a?.appTransactionID.flatMap { $0 == b?.appTransactionID ? $0 : nil }
        let who: String
        if let appleAccount, payers.count > 1 {
            who = "Apple Account \(appleAccount) (for \(payers.joined(separator: " and ")))"
        } else {
            who = payer ?? "the customer"
        }
        var v = ClaimVerdict(
            code: .chargedTwice,
            headline:
                "Charged twice: \(who) bought \(a?.productID ?? "?") twice, \(gap) min apart (transactions \(first) and \(second)\(a?.price == nil ? "" : ", \(ClaimVerdictJudge.money(a?.price, a?.currency)) each")).",
            transactionID: first)
        v.relatedTransactionIDs = [second]
        v.paidBy = payer
        v.orderIDs = (context.orders(first) + context.orders(second)).map(\.orderID)
        var credited = Set<String>()
        for tx in [first, second] {
            let standing = context.credits(tx).filter { $0.stands(at: context.now) }
            credited.formUnion(standing.compactMap(\.userID))
            v.details.append(
                "Transaction \(tx): \(standing.isEmpty ? "not credited" : "credited \(standing.count) time(s) to \(Set(standing.compactMap(\.userID)).sorted().joined(separator: ", "))")."
            )
        }
        v.creditedTo = credited.sorted()
        if let appleAccount {
            v.details.append("Both were paid from Apple Account \(appleAccount).")
        }
        v.details.append("Two separate Apple transactions: both charges are real (not a replay of one).")
        v.action =
            "If the second purchase was unintended, the customer can ask Apple for a refund (reportaproblem.apple.com); make sure each purchase is credited once."
        return v
    }

    // MARK: Consumption drafts

    func consumptionDrafts(
        context: LookupContext, scope: Set<String>, query: LookupQuery, fx: FXTable, profiles: [LookupUserProfile]
    ) throws -> [ConsumptionDraft] {
        let builder = ConsumptionDraftBuilder(context: context, customerConsented: query.customerConsented)
        var drafts: [ConsumptionDraft] = []
        for notification in context.evidence.notifications
        where notification.notificationType == "CONSUMPTION_REQUEST" && scope.contains(notification.transactionID ?? "")
        {
            let tx = notification.transactionID ?? ""
            var customer = ConsumptionDraftBuilder.Customer(recentRefunds: 0, refundAbuseFinding: false)
            let at = notification.signedDate ?? context.now
            if let payer = context.payer(of: tx)?.user {
                let payerContext: LookupContext
                if let known = profiles.first(where: { $0.userID == payer }) {
                    customer.profile = known
                    payerContext = context
                } else {
                    let resolution = try resolve(payer, as: .user)
                    payerContext = try loadContext(
                        transactionIDs: resolution.transactionIDs, orderIDs: resolution.orderIDs, at: at)
                    customer.profile = UserProfileBuilder(
                        context: payerContext, fx: fx, referenceCurrency: referenceCurrency
                    ).profile(for: payer)
                }
                let mine = UserProfileBuilder(context: payerContext, fx: fx, referenceCurrency: referenceCurrency)
                    .transactionIDs(of: payer)
                customer.recentRefunds =
                    mine.filter { id in
                        guard id != tx, let refund = payerContext.decisiveRefund(id),
                            refund.eventType != "REFUND_REVERSED",
                            let date = refund.eventDate
                        else { return false }
                        return date <= at && date >= at - 90 * ConsumptionDraftBuilder.day
                    }.count
                // The payer's own finding, or one about the Apple Account that paid (its refunds spread over
                // several backend accounts).
                let isRefundAbuse: (LookupFinding) -> Bool = { $0.ruleID == "IAP-016" && $0.isActive }
                let appleAccount = context.transactionsByID[tx]?.appTransactionID
                customer.refundAbuseFinding =
                    try reader.findings(
                        transactionIDs: [], originalIDs: [], orderIDs: [], userIDs: [], allFindingsUserIDs: [payer]
                    ).contains(where: isRefundAbuse)
                    || reader.findingsNaming(
                        ["app_transaction_id": Set([appleAccount].compactMap { $0 })],
                        throughAppleAccounts: [appleAccount].compactMap { $0 }
                    ).contains(where: isRefundAbuse)
                if let profile = customer.profile {
                    customer.lifetimePurchasedUSD = fx.convert(
                        profile.spendRef, from: referenceCurrency, to: "USD", at: at)
                    customer.lifetimeRefundedUSD = fx.convert(
                        profile.refundedRef, from: referenceCurrency, to: "USD", at: at)
                }
            }
            if let draft = builder.draft(for: notification, customer: customer) { drafts.append(draft) }
        }
        return drafts
    }

    // MARK: Answer

    func answer(for result: LookupResult) -> [String] {
        var lines: [String] = []
        let kinds = result.query.matches.map { "\($0.kind.label) (\($0.matched))" }
        lines.append("\u{201C}\(result.query.id)\u{201D} matched as " + kinds.joined(separator: "; ") + ".")
        let verdicts = result.verdicts
        if verdicts.count <= 6 {
            let ordered = verdicts.filter(\.problem) + verdicts.filter { !$0.problem }
            lines += ordered.map { v in
                guard let first = v.flaggedBy.first else { return v.headline }
                let more = v.flaggedBy.count > 1 ? " (+\(v.flaggedBy.count - 1) more)" : ""
                return v.headline + " But an active finding names it: " + first + more
            }
        } else {
            var counts: [ClaimVerdict.Code: Int] = [:]
            for v in verdicts { counts[v.code, default: 0] += 1 }
            lines.append(
                "\(verdicts.count) verdicts: "
                    + ClaimVerdict.Code.allCases.compactMap { code in counts[code].map { "\($0) \(code.rawValue)" } }
                    .joined(separator: ", ") + ".")
            let problems = verdicts.filter(\.problem)
            lines += problems.prefix(10).map(\.headline)
            if problems.count > 10 { lines.append("… and \(problems.count - 10) more problems (see the verdicts).") }
        }
        for user in result.users {
            if let account = user.account, user.purchaseCount == 0, user.orders == 0,
                user.standingCredits + user.reversedCredits == 0, user.sandboxPurchases == 0
            {
                lines.append(
                    "User \(user.userID) is a known account with no purchases, orders or credits in the store: \(Self.describe(account))."
                )
                continue
            }
            let spend = Money.decimalText(milliunits: user.spendRef) + " " + user.referenceCurrency
            lines.append(
                "User \(user.userID): \(Self.plural(user.purchaseCount, "purchase")), \(spend) spent, \(Self.plural(user.refundCount, "refund")), storefronts \(user.storefronts.isEmpty ? "none" : user.storefronts.joined(separator: ", "))\(user.tester ? ", tester" : "")."
            )
        }
        let active = result.findings.filter(\.isActive)
        if !active.isEmpty {
            let rules = OrderedIDs(active.map { "\($0.ruleID) (\($0.level))" }).values
            lines.append(
                "\(Self.plural(active.count, "active finding")) \(active.count == 1 ? "mentions" : "mention") these: "
                    + rules.prefix(8).joined(separator: ", ")
                    + (rules.count > 8 ? ", …" : "") + ".")
        }
        for draft in result.consumptionDrafts {
            lines.append(
                draft.state == .draft
                    ? "A consumption-information draft for transaction \(draft.transactionID) awaits a person's approval."
                    : "No consumption draft for transaction \(draft.transactionID): \(draft.reason ?? "")."
            )
        }
        return lines
    }

    func fillNotFound(_ result: inout LookupResult, query: LookupQuery) throws {
        let tried = query.kindsToTry.map(\.label)
        var lines = ["Nothing in the store matches \u{201C}\(query.id)\u{201D} as " + Self.orList(tried) + "."]
        if let run = result.lastRun {
            let finished = run.finishedAt.map(StorefrontTime.shortUTC) ?? "not finished"
            lines.append(
                "The last run was #\(run.runID), started \(StorefrontTime.shortUTC(run.startedAt)), finished \(finished) (\(run.status)): purchases, orders and credits after it have not been pulled yet."
            )
        } else {
            lines.append("The store has no runs yet: nothing has been pulled (run `iapguard run` first).")
        }
        var hints: [String] = []
        if query.id.contains(where: \.isLetter) {
            let p: [String: SQLValue] = ["id": .text(query.id)]
            for row in try reader.rows(
                """
                SELECT 'order ID' AS kind, order_id AS id FROM orders WHERE LOWER(order_id) = LOWER(:id)
                UNION SELECT 'user ID', user_id FROM orders WHERE LOWER(user_id) = LOWER(:id)
                UNION SELECT 'user ID', user_id FROM credits WHERE LOWER(user_id) = LOWER(:id)
                UNION SELECT 'user ID', user_id FROM users WHERE LOWER(user_id) = LOWER(:id)
                LIMIT 5
                """, p)
            {
                if let kind = row.text("kind"), let id = row.text("id") { hints.append("\(kind) \(id)") }
            }
        }
        if !hints.isEmpty { lines.append("Did you mean " + Self.orList(hints) + "? IDs are case-sensitive.") }
        let others = IDKind.priority.filter { !query.kindsToTry.contains($0) }
        if !others.isEmpty {
            lines.append("Only \(Self.orList(tried)) was tried: try without --kind to try every kind.")
        } else {
            lines.append(
                "Ask the customer for the transaction ID (App Store purchase history) or the Apple order ID (receipt e-mail), or look up their user ID."
            )
        }
        result.answer = lines
        var verdict = ClaimVerdict(code: .notFound, headline: lines[0], transactionID: nil)
        verdict.details = Array(lines.dropFirst())
        result.verdicts = [verdict]
    }

    // MARK: Text helpers

    /// `record users.csv:176: country EGY, app account token …, created 2025-10-06 00:00 UTC`.
    static func describe(_ account: LookupUserProfile.AccountRecord) -> String {
        let facts = [
            account.country.map { "country \($0)" },
            account.appAccountToken.map { "app account token \($0)" },
            account.applicationUsername.map { "applicationUsername \($0)" },
            account.createdAt.map { "created \(StorefrontTime.shortUTC($0))" },
        ].compactMap { $0 }
        return "record \(account.source)" + (facts.isEmpty ? "" : ": " + facts.joined(separator: ", "))
    }

    static func plural(_ n: Int, _ noun: String) -> String {
        if n == 1 { return "1 \(noun)" }
        return "\(n) " + (noun.hasSuffix("y") ? noun.dropLast() + "ies" : noun + "s")
    }

    static func orList(_ items: [String]) -> String {
        guard items.count > 1, let last = items.last else { return items.first ?? "" }
        return items.dropLast().joined(separator: ", ") + " or " + last
    }

    /// `Apple transaction, 2 credits, order` from a list of sources.
    static func counted(_ sources: [String]) -> String {
        var counts: [String: Int] = [:]
        var order: [String] = []
        for s in sources {
            if counts[s] == nil { order.append(s) }
            counts[s, default: 0] += 1
        }
        return order.map { counts[$0] == 1 ? $0 : plural(counts[$0] ?? 0, $0) }.joined(separator: ", ")
    }
}
