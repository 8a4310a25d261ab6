import Foundation

/// Read-only access to the store's documented views for a lookup. Every id reaches SQL as a bound parameter.
struct LookupStoreReader {
    let store: any PurchaseStore

    /// One result row by column name.
    struct Row {
        let values: [String: SQLValue]
        func text(_ name: String) -> String? { values[name]?.textValue }
        func int(_ name: String) -> Int64? { values[name]?.integerValue }
        func double(_ name: String) -> Double? { values[name]?.doubleValue }
    }

    func rows(_ sql: String, _ parameters: [String: SQLValue] = [:]) throws -> [Row] {
        var out: [Row] = []
        try store.query(sql, parameters: parameters) { columns, values in
            var map: [String: SQLValue] = [:]
            for (index, column) in columns.enumerated() where index < values.count { map[column] = values[index] }
            out.append(Row(values: map))
        }
        return out
    }

    /// `(:p0, :p1, …)` for `values`, adding the bound values to `parameters`; `(NULL)` for an empty list
    /// (which matches nothing).
    static func inList(_ values: [String], prefix: String, into parameters: inout [String: SQLValue]) -> String {
        guard !values.isEmpty else { return "(NULL)" }
        var names: [String] = []
        for (index, value) in values.enumerated() {
            let name = "\(prefix)\(index)"
            parameters[name] = .text(value)
            names.append(":" + name)
        }
        return "(" + names.joined(separator: ", ") + ")"
    }

    // MARK: Evidence

    func transactions(_ ids: [String]) throws -> [LookupEvidence.Transaction] {
        var p: [String: SQLValue] = [:]
        let list = Self.inList(ids, prefix: "t", into: &p)
        return try rows(
            """
            SELECT t.transaction_id, t.original_transaction_id, t.bundle_id, t.product_id,
                   COALESCE(k.type, t.type) AS product_type, t.quantity, t.purchase_date, t.expires_date,
                   t.environment, t.storefront, t.currency, t.price, t.app_account_token, t.in_app_ownership_type,
                   t.transaction_reason, t.revocation_date, t.revocation_reason, t.revocation_type,
                   t.revocation_percentage, t.verification, t.sighting_count, t.conflict_count,
                   t.app_transaction_id, t.offer_type, t.offer_identifier, t.offer_discount_type, t.offer_period,
                   t.billing_plan_type, t.commitment_info, t.advanced_commerce_info, t.unknown_fields
            FROM transactions t
            LEFT JOIN catalog k ON k.bundle_id = t.bundle_id AND k.product_id = t.product_id
            WHERE t.transaction_id IN \(list)
            ORDER BY t.purchase_date, t.transaction_id
            """, p
        ).map { r in
            LookupEvidence.Transaction(
                transactionID: r.text("transaction_id") ?? "", originalTransactionID: r.text("original_transaction_id"),
                bundleID: r.text("bundle_id"), productID: r.text("product_id"), productType: r.text("product_type"),
                quantity: r.int("quantity"), purchaseDate: r.int("purchase_date"), expiresDate: r.int("expires_date"),
                environment: r.text("environment"), storefront: r.text("storefront"), currency: r.text("currency"),
                price: r.int("price"), appAccountToken: r.text("app_account_token"),
                inAppOwnershipType: r.text("in_app_ownership_type"), transactionReason: r.text("transaction_reason"),
                revocationDate: r.int("revocation_date"), revocationReason: r.int("revocation_reason"),
                revocationType: r.text("revocation_type"), revocationPercentage: r.int("revocation_percentage"),
                verification: r.text("verification") ?? "unverified", sightingCount: r.int("sighting_count") ?? 0,
                conflictCount: r.int("conflict_count") ?? 0, appTransactionID: r.text("app_transaction_id"),
                offerType: r.int("offer_type"), offerIdentifier: r.text("offer_identifier"),
                offerDiscountType: r.text("offer_discount_type"), offerPeriod: r.text("offer_period"),
                billingPlanType: r.text("billing_plan_type"), commitmentInfo: r.text("commitment_info"),
                advancedCommerceInfo: r.text("advanced_commerce_info"), unknownFields: r.text("unknown_fields"))
        }
    }

    func sightings(_ transactionIDs: [String]) throws -> [LookupEvidence.Sighting] {
        var p: [String: SQLValue] = [:]
        let list = Self.inList(transactionIDs, prefix: "t", into: &p)
        return try rows(
            """
            SELECT sighting_id, transaction_id, original_transaction_id, product_id, bundle_id, environment,
                   source_kind, source_name, source_ref, receipt_status, submitted_by_user_id, submitted_order_id,
                   received_at, verification, verification_reason, verification_detail, anomalies, app_account_token
            FROM sightings WHERE transaction_id IN \(list)
            ORDER BY received_at, source_name, source_ref, sighting_id
            """, p
        ).map { r in
            LookupEvidence.Sighting(
                sightingID: r.text("sighting_id") ?? "", transactionID: r.text("transaction_id") ?? "",
                originalTransactionID: r.text("original_transaction_id"), productID: r.text("product_id"),
                bundleID: r.text("bundle_id"), environment: r.text("environment"),
                sourceKind: r.text("source_kind") ?? "", sourceName: r.text("source_name") ?? "",
                sourceRef: r.text("source_ref") ?? "", receiptStatus: r.int("receipt_status"),
                submittedByUserID: r.text("submitted_by_user_id"), submittedOrderID: r.text("submitted_order_id"),
                receivedAt: r.int("received_at"), verification: r.text("verification") ?? "unverified",
                verificationReason: r.text("verification_reason"), verificationDetail: r.text("verification_detail"),
                anomalies: r.text("anomalies").flatMap { $0.isEmpty ? nil : $0 },
                appAccountToken: r.text("app_account_token"))
        }
    }

    func orders(orderIDs: [String], transactionIDs: [String]) throws -> [LookupEvidence.Order] {
        var p: [String: SQLValue] = [:]
        let orders = Self.inList(orderIDs, prefix: "o", into: &p)
        let transactions = Self.inList(transactionIDs, prefix: "t", into: &p)
        return try rows(
            """
            SELECT order_id, user_id, bundle_id, product_id, quantity, price, currency, storefront, user_country,
                   created_at, status, transaction_id, app_account_token, application_username, source_name, source_ref
            FROM orders WHERE order_id IN \(orders) OR transaction_id IN \(transactions)
            ORDER BY created_at, order_id
            """, p
        ).map { r in
            LookupEvidence.Order(
                orderID: r.text("order_id") ?? "", userID: r.text("user_id"), bundleID: r.text("bundle_id"),
                productID: r.text("product_id"), quantity: r.int("quantity"), price: r.int("price"),
                currency: r.text("currency"), storefront: r.text("storefront"), userCountry: r.text("user_country"),
                createdAt: r.int("created_at"), status: r.text("status"), transactionID: r.text("transaction_id"),
                appAccountToken: r.text("app_account_token"), applicationUsername: r.text("application_username"),
                sourceRef: Self.ref(r))
        }
    }

    func credits(transactionIDs: [String], orderIDs: [String]) throws -> [LookupEvidence.Credit] {
        try ledgerRows(
            "credits", extra: "reversed_at, consumed_units, consumed_at", transactionIDs: transactionIDs,
            orderIDs: orderIDs)
    }

    /// Clawback ledger rows (negative units) of these transactions or orders (the `clawbacks` view).
    func clawbacks(transactionIDs: [String], orderIDs: [String]) throws -> [LookupEvidence.Credit] {
        try ledgerRows(
            "clawbacks", extra: "NULL AS reversed_at, NULL AS consumed_units, NULL AS consumed_at",
            transactionIDs: transactionIDs, orderIDs: orderIDs)
    }

    /// Rows of a ledger view (`credits` or `clawbacks`, named by the code) naming these transactions or orders.
    private func ledgerRows(_ view: String, extra: String, transactionIDs: [String], orderIDs: [String]) throws
        -> [LookupEvidence.Credit]
    {
        var p: [String: SQLValue] = [:]
        let transactions = Self.inList(transactionIDs, prefix: "t", into: &p)
        let orders = Self.inList(orderIDs, prefix: "o", into: &p)
        return try rows(
            """
            SELECT credit_id, transaction_id, order_id, user_id, product_id, units, credited_at, reversal_reason,
                   source_name, source_ref, \(extra)
            FROM \(view) WHERE transaction_id IN \(transactions) OR order_id IN \(orders)
            ORDER BY credited_at, credit_id
            """, p
        ).map { r in
            LookupEvidence.Credit(
                creditID: r.text("credit_id") ?? "", transactionID: r.text("transaction_id"),
                orderID: r.text("order_id"), userID: r.text("user_id"), productID: r.text("product_id"),
                units: r.int("units"), creditedAt: r.int("credited_at"), reversedAt: r.int("reversed_at"),
                reversalReason: r.text("reversal_reason"), sourceRef: Self.ref(r),
                consumedUnits: r.int("consumed_units"), consumedAt: r.int("consumed_at"))
        }
    }

    func notifications(transactionIDs: [String]) throws -> [LookupEvidence.Notification] {
        var p: [String: SQLValue] = [:]
        let list = Self.inList(transactionIDs, prefix: "t", into: &p)
        return try rows(
            """
            SELECT notification_uuid, notification_type, subtype, signed_date, environment, transaction_id,
                   original_transaction_id, product_id, revocation_date, revocation_percentage,
                   consumption_request_reason, verification, verification_reason, source_name, source_ref,
                   grace_period_expires_date
            FROM notifications WHERE transaction_id IN \(list)
            ORDER BY signed_date, notification_uuid
            """, p
        ).map { r in
            LookupEvidence.Notification(
                notificationUUID: r.text("notification_uuid") ?? "", notificationType: r.text("notification_type"),
                subtype: r.text("subtype"), signedDate: r.int("signed_date"), environment: r.text("environment"),
                transactionID: r.text("transaction_id"), originalTransactionID: r.text("original_transaction_id"),
                productID: r.text("product_id"), revocationDate: r.int("revocation_date"),
                revocationPercentage: r.int("revocation_percentage"),
                consumptionRequestReason: r.text("consumption_request_reason"),
                verification: r.text("verification") ?? "unverified", verificationReason: r.text("verification_reason"),
                sourceRef: Self.ref(r), gracePeriodExpiresDate: r.int("grace_period_expires_date"))
        }
    }

    func refunds(transactionIDs: [String]) throws -> [LookupEvidence.RefundEvent] {
        var p: [String: SQLValue] = [:]
        let list = Self.inList(transactionIDs, prefix: "t", into: &p)
        return try rows(
            """
            SELECT event_id, transaction_id, event_type, event_date, revocation_reason, revocation_percentage, origin
            FROM refunds WHERE transaction_id IN \(list)
            ORDER BY event_date, event_id
            """, p
        ).map { r in
            LookupEvidence.RefundEvent(
                eventID: r.text("event_id") ?? "", transactionID: r.text("transaction_id"),
                eventType: r.text("event_type") ?? "", eventDate: r.int("event_date"),
                revocationReason: r.int("revocation_reason"), revocationPercentage: r.int("revocation_percentage"),
                origin: r.text("origin") ?? "")
        }
    }

    /// Findings naming any of the transactions, originals or orders, plus user-level findings (no transaction)
    /// about any of `userIDs`, plus every finding about `allFindingsUserIDs`. Active first, then by level.
    func findings(
        transactionIDs: [String], originalIDs: [String], orderIDs: [String], userIDs: [String],
        allFindingsUserIDs: [String]
    ) throws -> [LookupFinding] {
        guard try hasView("findings") else { return [] }
        var p: [String: SQLValue] = [:]
        let transactions = Self.inList(transactionIDs, prefix: "t", into: &p)
        let originals = Self.inList(originalIDs, prefix: "g", into: &p)
        let orders = Self.inList(orderIDs, prefix: "o", into: &p)
        let users = Self.inList(userIDs, prefix: "u", into: &p)
        let allUsers = Self.inList(allFindingsUserIDs, prefix: "a", into: &p)
        let found = try rows(
            """
            SELECT finding_id, rule_id, rule_title, level, status, outcome, summary, transaction_id, order_id,
                   user_id, amount_ref, first_run_id, last_seen_run_id
            FROM findings
            WHERE transaction_id IN \(transactions) OR original_transaction_id IN \(originals)
               OR order_id IN \(orders) OR (transaction_id IS NULL AND user_id IN \(users))
               OR user_id IN \(allUsers)
            ORDER BY rule_id, finding_id
            """, p
        ).map(Self.finding)
        return try withCases(found)
    }

    /// Findings about an account as a whole (no transaction, no order) of the accounts credited or ordering
    /// with a purchase of `appleAccounts` (Apple's `appTransactionId`) whose evidence names what is looked for:
    /// a field named as a key of `naming` holding one of its values (`user_id`: these accounts;
    /// `app_transaction_id`: this Apple Account). One payer's refunds spread over several backend accounts are
    /// one IAP-016 finding under the latest account, its evidence listing the others: support looking up any of
    /// them finds it. Findings whose id is in `excluding` are left out; none without Apple Accounts.
    func findingsNaming(
        _ naming: [String: Set<String>], throughAppleAccounts appleAccounts: [String], excluding: Set<String> = []
    ) throws -> [LookupFinding] {
        guard !appleAccounts.isEmpty, naming.values.contains(where: { !$0.isEmpty }), try hasView("findings") else {
            return []
        }
        var p: [String: SQLValue] = [:]
        let accounts = Self.inList(appleAccounts, prefix: "a", into: &p)
        let candidates = try rows(
            """
            SELECT finding_id, rule_id, rule_title, level, status, outcome, summary, transaction_id, order_id,
                   user_id, amount_ref, first_run_id, last_seen_run_id, evidence_json
            FROM findings
            WHERE transaction_id IS NULL AND order_id IS NULL AND user_id IN (
                SELECT c.user_id FROM transactions t JOIN credits c ON c.transaction_id = t.transaction_id
                WHERE t.app_transaction_id IN \(accounts)
                UNION
                SELECT o.user_id FROM transactions t JOIN orders o ON o.transaction_id = t.transaction_id
                WHERE t.app_transaction_id IN \(accounts))
            ORDER BY rule_id, finding_id
            """, p)
        let json = EvidenceJSON()
        let decoder = JSONDecoder()
        let named = candidates.filter { r in
            guard let id = r.text("finding_id"), !excluding.contains(id), let text = r.text("evidence_json") else {
                return false
            }
            let evidence = json.decodeRows(text) ?? (try? decoder.decode([EvidenceRow].self, from: Data(text.utf8)))
            return (evidence ?? []).contains { row in
                row.fields.contains { field in field.value.map { naming[field.name]?.contains($0) == true } == true }
            }
        }
        return try withCases(named.map(Self.finding))
    }

    private static func finding(_ r: Row) -> LookupFinding {
        LookupFinding(
            findingID: r.text("finding_id") ?? "", ruleID: r.text("rule_id") ?? "",
            ruleTitle: r.text("rule_title") ?? "", level: r.text("level") ?? "", status: r.text("status") ?? "",
            outcome: r.text("outcome") ?? "", summary: r.text("summary") ?? "",
            transactionID: r.text("transaction_id"), orderID: r.text("order_id"), userID: r.text("user_id"),
            amountRef: r.int("amount_ref"), firstRunID: r.int("first_run_id") ?? 0,
            lastSeenRunID: r.int("last_seen_run_id") ?? 0)
    }

    /// `found` with each finding's case and its state, active first, then by level.
    private func withCases(_ found: [LookupFinding]) throws -> [LookupFinding] {
        let cases = try caseOfFindings(found.map(\.findingID))
        return found.map { finding in
            var withCase = finding
            withCase.caseID = cases[finding.findingID]?.id
            withCase.caseStatus = cases[finding.findingID]?.status
            return withCase
        }.sorted(by: Self.listedBefore)
    }

    /// The order findings are listed in: active first, then by level (highest first), rule and id.
    static func listedBefore(_ a: LookupFinding, _ b: LookupFinding) -> Bool {
        if a.isActive != b.isActive { return a.isActive }
        if a.levelRank != b.levelRank { return a.levelRank > b.levelRank }
        return (a.ruleID, a.findingID) < (b.ruleID, b.findingID)
    }

    /// Finding id → its case and the case's state (a merged case answers with the case that absorbed it);
    /// empty on a store from before the cases migration.
    func caseOfFindings(_ findingIDs: [String]) throws -> [String: (id: String, status: String)] {
        guard !findingIDs.isEmpty, try hasView("case_findings") else { return [:] }
        var p: [String: SQLValue] = [:]
        let list = Self.inList(findingIDs, prefix: "f", into: &p)
        var out: [String: (id: String, status: String)] = [:]
        for r in try rows(
            """
            SELECT m.finding_id, COALESCE(t.case_id, c.case_id) AS case_id, COALESCE(t.status, c.status) AS status
            FROM case_findings m JOIN cases c ON c.case_id = m.case_id
            LEFT JOIN cases t ON t.case_id = c.merged_into
            WHERE m.finding_id IN \(list)
            """, p)
        {
            if let finding = r.text("finding_id"), let id = r.text("case_id") {
                out[finding] = (id, r.text("status") ?? "")
            }
        }
        return out
    }

    /// Lower-cased token → the users whose orders carry it.
    func tokenOwners(_ tokens: [String]) throws -> [String: Set<String>] {
        var p: [String: SQLValue] = [:]
        let list = Self.inList(tokens.map { $0.lowercased() }, prefix: "k", into: &p)
        // The accounts source names the owner first (as IAP-012 and IAP-013 take it).
        var owners: [String: Set<String>] = [:]
        for r in try rows(
            """
            SELECT LOWER(app_account_token) AS token, user_id FROM users
            WHERE LOWER(app_account_token) IN \(list) AND user_id IS NOT NULL
            """, p)
        {
            if let token = r.text("token"), let user = r.text("user_id") { owners[token, default: []].insert(user) }
        }
        // Otherwise the orders carrying the token: the account of its earliest order owns it (IAP-013), so a
        // token on several accounts' orders names one owner.
        var earliest: [String: String] = [:]
        for r in try rows(
            """
            SELECT LOWER(app_account_token) AS token, user_id FROM orders
            WHERE LOWER(app_account_token) IN \(list) AND user_id IS NOT NULL
            ORDER BY COALESCE(created_at, 0), order_id
            """, p)
        {
            guard let token = r.text("token"), let user = r.text("user_id"), owners[token] == nil else { continue }
            if earliest[token] == nil { earliest[token] = user }
        }
        for (token, user) in earliest { owners[token] = [user] }
        return owners
    }

    /// Who uses each of `tokens` (lower-cased): whether the accounts source names it, the accounts whose orders
    /// carry it, and which Apple Accounts paid for which of those accounts' orders.
    func tokenUse(_ tokens: [String]) throws -> LookupContext.TokenUse {
        var p: [String: SQLValue] = [:]
        let list = Self.inList(tokens.map { $0.lowercased() }, prefix: "k", into: &p)
        var use = LookupContext.TokenUse()
        for r in try rows(
            "SELECT DISTINCT LOWER(app_account_token) AS token FROM users WHERE LOWER(app_account_token) IN \(list)", p)
        {
            if let token = r.text("token") { use.known.insert(token) }
        }
        for r in try rows(
            """
            SELECT DISTINCT LOWER(o.app_account_token) AS token, o.user_id, t.app_transaction_id
            FROM orders o LEFT JOIN transactions t ON t.transaction_id = o.transaction_id
            WHERE LOWER(o.app_account_token) IN \(list) AND o.user_id IS NOT NULL
            """, p)
        {
            guard let token = r.text("token"), let user = r.text("user_id") else { continue }
            use.holders[token, default: []].insert(user)
            if let account = r.text("app_transaction_id") {
                use.appleAccounts[token, default: [:]][account, default: []].insert(user)
            }
        }
        return use
    }

    /// The accounts source's records (`users` view) of `userIDs`; empty on a store without the view.
    func accounts(_ userIDs: [String]) throws -> [String: LookupUserProfile.AccountRecord] {
        guard !userIDs.isEmpty, try hasView("users") else { return [:] }
        var p: [String: SQLValue] = [:]
        let list = Self.inList(userIDs, prefix: "u", into: &p)
        var out: [String: LookupUserProfile.AccountRecord] = [:]
        for r in try rows(
            """
            SELECT user_id, country, app_account_token, application_username, created_at, source_name, source_ref
            FROM users WHERE user_id IN \(list)
            """, p)
        {
            guard let user = r.text("user_id") else { continue }
            out[user] = LookupUserProfile.AccountRecord(
                country: r.text("country"), appAccountToken: r.text("app_account_token")?.lowercased(),
                applicationUsername: r.text("application_username"), createdAt: r.int("created_at"),
                source: Self.ref(r))
        }
        return out
    }

    /// The accounts the accounts source (`users`) gives app account token `token` (case-insensitive), sorted.
    func accountsWithToken(_ token: String) throws -> [String] {
        guard try hasView("users") else { return [] }
        return try rows(
            "SELECT user_id FROM users WHERE LOWER(app_account_token) = LOWER(:id) AND user_id IS NOT NULL ORDER BY 1",
            ["id": .text(token)]
        ).compactMap { $0.text("user_id") }
    }

    /// `bundle|product` → units per purchase, from the catalog.
    func catalogUnits() throws -> [String: Int64] {
        var units: [String: Int64] = [:]
        for r in try rows("SELECT bundle_id, product_id, units FROM catalog") {
            if let bundle = r.text("bundle_id"), let product = r.text("product_id"), let u = r.int("units") {
                units[bundle + "|" + product] = u
            }
        }
        return units
    }

    /// How the backend credits each of `bundles`' subscription renewals (IAP-014's `renewal_policy`, same
    /// SQL): renewals past the grace period at `now`, Family Sharing copies left out, and how many of them any
    /// credit refers to, by transaction id or through an order.
    func renewalCrediting(bundles: [String], now: Int64, graceMillis: Int64) throws -> [String: RenewalCrediting] {
        guard !bundles.isEmpty else { return [:] }
        var p: [String: SQLValue] = ["now": .integer(now), "grace": .integer(graceMillis)]
        let list = Self.inList(bundles, prefix: "b", into: &p)
        var out: [String: RenewalCrediting] = [:]
        for r in try rows(
            """
            SELECT r.bundle_id, COUNT(*) AS renewals,
                   SUM(CASE WHEN EXISTS (SELECT 1 FROM credits c WHERE c.transaction_id = r.transaction_id)
                              OR EXISTS (SELECT 1 FROM orders o JOIN credits c ON c.order_id = o.order_id
                                         WHERE o.transaction_id = r.transaction_id)
                              OR COALESCE((SELECT SUM(c.units) FROM credits c
                                           WHERE c.transaction_id = r.original_transaction_id) * 86400000
                                 >= (SELECT SUM(p.expires_date - p.purchase_date) - 43200000 * COUNT(*)
                                     FROM transactions p
                                     WHERE p.original_transaction_id = r.original_transaction_id
                                       AND p.purchase_date <= r.purchase_date AND p.expires_date IS NOT NULL
                                       AND COALESCE(p.in_app_ownership_type, 'PURCHASED') <> 'FAMILY_SHARED'), FALSE)
                            THEN 1 ELSE 0 END) AS credited
            FROM transactions r
            LEFT JOIN catalog rk ON rk.bundle_id = r.bundle_id AND rk.product_id = r.product_id
            WHERE r.bundle_id IN \(list)
              AND r.original_transaction_id <> r.transaction_id
              AND COALESCE(r.type, rk.type) = 'Auto-Renewable Subscription'
              AND r.environment = 'Production'
              AND COALESCE(r.in_app_ownership_type, 'PURCHASED') <> 'FAMILY_SHARED'
              AND r.purchase_date IS NOT NULL AND :now - r.purchase_date >= :grace
            GROUP BY r.bundle_id
            """, p)
        {
            if let bundle = r.text("bundle_id") {
                out[bundle] = RenewalCrediting(renewals: r.int("renewals") ?? 0, credited: r.int("credited") ?? 0)
            }
        }
        return out
    }

    func apps() throws -> Set<String> {
        Set(try rows("SELECT bundle_id FROM apps").compactMap { $0.text("bundle_id") })
    }

    func testers() throws -> Set<String> {
        Set(try rows("SELECT user_id FROM testers").compactMap { $0.text("user_id") })
    }

    func lastRun() throws -> LookupResult.RunInfo? {
        guard
            let r = try rows(
                "SELECT run_id, started_at, finished_at, status, window_until FROM runs ORDER BY run_id DESC LIMIT 1"
            ).first, let id = r.int("run_id")
        else { return nil }
        return LookupResult.RunInfo(
            runID: id, startedAt: r.int("started_at") ?? 0, finishedAt: r.int("finished_at"),
            status: r.text("status") ?? "", windowUntil: r.int("window_until"))
    }

    /// Whether a view (or table) exists: a store from before the findings migration has no `findings`.
    /// Asked with an empty query rather than a catalog table, so it works on SQLite and PostgreSQL alike.
    func hasView(_ name: String) throws -> Bool {
        guard name.allSatisfy({ $0.isLetter || $0 == "_" }) else { return false }
        do {
            _ = try rows("SELECT 1 FROM \(name) WHERE 1 = 0", [:])
            return true
        } catch {
            return false
        }
    }

    private static func ref(_ r: Row) -> String {
        [r.text("source_name"), r.text("source_ref")].compactMap { $0 }.joined(separator: " ")
    }
}
