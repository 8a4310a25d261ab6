/// What one run read from one source, judged as a delivery: a broken export (every record bad, most of them
/// bad, a column the rules need missing everywhere, too few records) is a source error, an empty delivery a
/// warning. See docs/data-contract.md, *When a source is partial*.
///
/// It only counts: the ingestor hands it every batch and every file it read, in order, and ``verdict`` turns
/// the counts into messages.
public struct SourceHealth: Sendable {
    /// One file (or database) the ingest read in this run.
    public struct Delivery: Sendable {
        /// The file's name.
        public var name: String
        /// Its size in bytes (`nil` for databases).
        public var bytes: Int64?
        /// Records it yielded, good and bad.
        public var records: Int
        /// A CSV file with a header row and no record.
        public var headerOnly: Bool

        public init(name: String, bytes: Int64?, records: Int, headerOnly: Bool) {
            self.name = name
            self.bytes = bytes
            self.records = records
            self.headerOnly = headerOnly
        }
    }

    /// Optional fields of orders and credits that rules depend on, by source kind: a source where no record
    /// carries one of them is degraded (unless the config declares the field absent on purpose). A credit's
    /// `user_id` and `units` are required in every record, so their absence already quarantines it.
    public static func fieldsRulesNeed(_ kind: Config.Source.Kind) -> [String] {
        switch kind {
        case .orders: return ["user_id", "transaction_id", "price", "currency"]
        case .credits: return ["transaction_id"]
        default: return []
        }
    }

    public let source: Config.Source
    /// Records kept (sightings, notifications, orders, credits) and records quarantined in this run.
    public private(set) var good = 0
    public private(set) var bad = 0
    /// Input lines (rows) that gave good records: the bad share counts these, since one notification line
    /// gives a notification and its transaction, and one receipt line several transactions, while a bad line
    /// is one quarantined record.
    public private(set) var goodLines = 0
    /// The first quarantined record: `location: reason`.
    public private(set) var firstBad: String?
    /// The first ``maxBadShown`` quarantined records of the run, `location: reason`, for the log.
    public private(set) var firstBadRecords: [String] = []
    /// Notifications of this run stored with verification `failed`, by reason (they are kept, not quarantined,
    /// but rules never act on them), and the first few `location (reason)`.
    public private(set) var failedNotifications: [String: Int] = [:]
    public private(set) var firstFailedNotifications: [String] = []
    /// Credits of this run whose `reversed_at` preceded their `credited_at` (held standing, see
    /// ``Credit/reversalBeforeGrant``), and the first ``maxBadShown`` of them, `location (credit id)`.
    public private(set) var reversalsBeforeGrant = 0
    public private(set) var firstReversalsBeforeGrant: [String] = []
    /// Orders and credits of this run dated before the App Store opened (``appStoreOpened``), and the first
    /// ``maxBadShown`` of them, `location (field date)`: most likely epoch seconds read as milliseconds.
    public private(set) var datedBeforeAppStore = 0
    public private(set) var firstDatedBeforeAppStore: [String] = []
    /// 2008-07-10T00:00:00Z, the day the App Store opened, in epoch milliseconds: no App Store purchase, order
    /// or credit can be older. Epoch seconds of any date since then read as milliseconds land in January 1970.
    public static let appStoreOpened: Int64 = 1_215_648_000_000
    /// How many quarantined records the log names per source.
    public static let maxBadShown = 5
    /// Files or databases read in this run (unchanged files are skipped and not counted).
    public private(set) var deliveries: [Delivery] = []
    /// Whether the source was read at all in this run (a database or server source always is).
    public private(set) var wasRead = false
    /// The source's folder, when it held no file to read (nothing read, nothing skipped as unchanged).
    public private(set) var emptyFolder: String?
    /// Per field the rules need: how many good records carried it.
    private var present: [String: Int] = [:]

    public init(source: Config.Source) {
        self.source = source
    }

    /// Counts one batch the ingest produced.
    public mutating func observe(_ batch: IngestBatch) {
        wasRead = true
        // A refused signed record kept as a failed copy (at its quarantine entry's `file:line`) is a bad
        // record, not a good one: a wholly refused source must still fail the checks below.
        let refused = Set(batch.quarantined.lazy.map(\.location))
        let sightings =
            refused.isEmpty ? batch.sightings.count : batch.sightings.count(where: { !refused.contains($0.sourceRef) })
        good += sightings + batch.notifications.count + batch.orders.count + batch.credits.count + batch.users.count
        bad += batch.quarantined.count
        for notification in batch.notifications where notification.verification.status == .failed {
            let reason = notification.verification.reason ?? "?"
            failedNotifications[reason, default: 0] += 1
            if firstFailedNotifications.count < Self.maxBadShown {
                firstFailedNotifications.append("\(notification.sourceRef) (\(reason))")
            }
        }
        // Every record of a line carries the line's location. Read by index (a `for record in` loop copied
        // each record, retaining every one of its strings, to read one field); a location equal to the one
        // just inserted (the next record of the same line) is not hashed again.
        var lines = Set<String>(minimumCapacity: batch.recordCount)
        func insert<Records: RandomAccessCollection>(_ records: Records, _ ref: (Records.Index) -> String) {
            var previous: String?
            for index in records.indices {
                let location = ref(index)
                if location != previous {
                    lines.insert(location)
                    previous = location
                }
            }
        }
        insert(batch.sightings) { batch.sightings[$0].sourceRef }
        insert(batch.notifications) { batch.notifications[$0].sourceRef }
        insert(batch.orders) { batch.orders[$0].2 }
        insert(batch.credits) { batch.credits[$0].2 }
        insert(batch.users) { batch.users[$0].2 }
        goodLines += lines.count
        if firstBad == nil, let first = batch.quarantined.first {
            firstBad = "\(first.location): \(first.reason)"
        }
        for record in batch.quarantined.prefix(Self.maxBadShown - firstBadRecords.count) {
            firstBadRecords.append("\(record.location): \(record.reason)")
        }
        // Counted per batch, then added to `present` once per field (not a dictionary update per record).
        var (users, transactions, prices, currencies) = (0, 0, 0, 0)
        for index in batch.orders.indices {
            if batch.orders[index].order.userID != nil { users += 1 }
            if batch.orders[index].order.transactionID != nil { transactions += 1 }
            if batch.orders[index].order.price != nil { prices += 1 }
            if batch.orders[index].order.currency != nil { currencies += 1 }
        }
        for (credit, _, ref) in batch.credits where credit.reversalBeforeGrant != nil {
            reversalsBeforeGrant += 1
            if firstReversalsBeforeGrant.count < Self.maxBadShown {
                firstReversalsBeforeGrant.append("\(ref) (\(credit.creditID))")
            }
        }
        func checkDate(_ time: Int64?, _ field: String, _ ref: String) {
            guard let time, time < Self.appStoreOpened else { return }
            datedBeforeAppStore += 1
            if firstDatedBeforeAppStore.count < Self.maxBadShown {
                firstDatedBeforeAppStore.append("\(ref) (\(field) \(TimeParser.iso8601(time)))")
            }
        }
        for (order, _, ref) in batch.orders { checkDate(order.createdAt, "created_at", ref) }
        for (credit, _, ref) in batch.credits { checkDate(credit.creditedAt, "credited_at", ref) }
        // A credit that names its order is tied to the order's transaction (linked after the ingest).
        for index in batch.credits.indices
        where batch.credits[index].credit.transactionID != nil || batch.credits[index].credit.orderID != nil {
            transactions += 1
        }
        for (field, count) in [
            ("user_id", users), ("transaction_id", transactions), ("price", prices), ("currency", currencies),
        ] where count > 0 {
            present[field, default: 0] += count
        }
    }

    /// Notes that the source was read (a server source, whose empty answer yields no batch).
    public mutating func markRead() {
        wasRead = true
    }

    /// Whether ``verdict(hadEarlierRecords:)`` needs to know about earlier records (an empty delivery).
    public var needsEarlierRecords: Bool {
        wasRead && good + bad == 0
    }

    /// Notes that the source's folder held no file: as silent a gap as a 0-byte file.
    public mutating func foundEmptyFolder(_ path: String) {
        emptyFolder = path
    }

    /// Notes one file the ingest read.
    public mutating func delivered(_ delivery: Delivery) {
        wasRead = true
        deliveries.append(delivery)
    }

    /// The source errors (each makes the run `partial`) and warnings of this run's delivery.
    /// `hadEarlierRecords`: the store held records of this source before the run.
    public func verdict(hadEarlierRecords: Bool) -> (errors: [String], warnings: [String]) {
        var errors: [String] = []
        var warnings: [String] = []
        let total = good + bad
        let lines = goodLines + bad
        let first = firstBad.map { " (first: \($0))" } ?? ""
        if good == 0, bad > 0 {
            errors.append("no good record: all \(bad) records were quarantined\(first)")
        } else if lines > 0, Double(bad) > source.maxBadShare * Double(lines) {
            let total = lines
            let percent = Int((Double(bad) * 100 / Double(total)).rounded())
            let limit = Int((source.maxBadShare * 100).rounded())
            errors.append(
                "\(bad) of \(total) records (\(percent) %) were quarantined, above the \(limit) % limit (max_bad_share)\(first)"
            )
        }
        if good > 0 {
            for field in Self.fieldsRulesNeed(source.kind)
            where present[field, default: 0] == 0 && !source.absentColumns.contains(field) {
                let named = source.kind == .credits && field == "transaction_id" ? "transaction_id or order_id" : field
                errors.append(
                    "degraded source: no record has \(named) (the column is missing or always empty); rules that "
                        + "need it cannot judge these records (list it in absent_columns if that is on purpose)")
            }
        }
        if wasRead, total == 0 {
            let empty = deliveries.filter { $0.bytes == 0 }.map(\.name)
            let headerOnly = deliveries.filter(\.headerOnly).map(\.name)
            if !empty.isEmpty {
                warnings.append("delivered 0 records (empty file: \(empty.joined(separator: ", ")))")
            } else if hadEarlierRecords {
                let detail = headerOnly.isEmpty ? "" : "header only: \(headerOnly.joined(separator: ", ")); "
                warnings.append("delivered 0 records (\(detail)earlier runs had records)")
            } else if !headerOnly.isEmpty {
                // A first delivery of nothing but a header is as suspect as an empty file.
                warnings.append("delivered 0 records (header only: \(headerOnly.joined(separator: ", ")))")
            } else if !deliveries.isEmpty {
                // Nor is one of blank lines only.
                warnings.append(
                    "delivered 0 records (no record in: \(deliveries.map(\.name).joined(separator: ", ")))")
            }
        }
        if let folder = emptyFolder, total == 0 {
            warnings.append("delivered 0 records (the folder holds no file: \(folder))")
        }
        if reversalsBeforeGrant > 0 {
            let more = reversalsBeforeGrant > firstReversalsBeforeGrant.count ? ", …" : ""
            warnings.append(
                "\(reversalsBeforeGrant) credit(s) reversed before they were granted (reversed_at earlier than "
                    + "credited_at): a reversal cannot precede the grant, so they are held standing: "
                    + firstReversalsBeforeGrant.joined(separator: ", ") + more)
        }
        if datedBeforeAppStore > 0 {
            let more = datedBeforeAppStore > firstDatedBeforeAppStore.count ? ", …" : ""
            warnings.append(
                "\(datedBeforeAppStore) record(s) dated before the App Store opened (2008-07-10): epoch seconds "
                    + "where milliseconds are expected? " + firstDatedBeforeAppStore.joined(separator: ", ") + more)
        }
        if let minimum = source.minRecords, wasRead || emptyFolder != nil, good < minimum {
            errors.append("delivered \(good) records, fewer than min_records (\(minimum))")
        }
        return (errors, warnings)
    }
}
