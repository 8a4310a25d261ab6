/// Maps the backend's rows (from CSV, JSON Lines or a SQL query, all seen as field name → text) onto
/// ``BackendOrder`` and ``Credit``, with errors that name the field.
public enum BackendRowMapper {
    /// Fields an order row may carry (anything else is ignored).
    public static let orderFields = [
        "order_id", "user_id", "bundle_id", "product_id", "quantity", "price", "price_milli", "currency", "storefront",
        "user_country", "created_at", "status", "transaction_id", "app_account_token", "application_username",
        "environment",
    ]
    /// Fields a credit row may carry.
    public static let creditFields = [
        "credit_id", "transaction_id", "order_id", "user_id", "product_id", "units", "credited_at", "reversed_at",
        "reversal_reason", "consumed_units", "consumed_at",
    ]

    static func text(_ row: [String: String], _ key: String) -> String? {
        guard let raw = row[key] else { return nil }
        let value = TextTrim.whitespaces(raw)
        guard !value.isEmpty else { return nil }
        return value
    }

    static func integer(_ row: [String: String], _ key: String) throws -> Int64? {
        guard let value = text(row, key) else { return nil }
        guard let i = Int64(value) else {
            throw RecordError("\(key): expected a whole number, found \"\(value.prefix(40))\"")
        }
        return i
    }

    static func time(_ row: [String: String], _ key: String) throws -> Int64? {
        guard let value = text(row, key) else { return nil }
        guard let ms = TimeParser.epochMillis(value) else {
            throw RecordError("\(key): expected epoch milliseconds or an RFC 3339 time, found \"\(value.prefix(40))\"")
        }
        return ms
    }

    /// A NUL character in an id or any other field is never real data (and cuts C strings short in the
    /// tools that read the store): the record is rejected.
    static func rejectNUL(_ row: [String: String], fields: [String]) throws {
        for field in fields where row[field]?.utf8.contains(0) == true {
            throw RecordError("\(field): contains a NUL character")
        }
    }

    /// Maps one order row.
    public static func order(_ row: [String: String]) throws -> BackendOrder {
        try rejectNUL(row, fields: orderFields)
        guard let id = text(row, "order_id") else { throw RecordError("order_id: missing") }
        var o = BackendOrder(orderID: id)
        o.userID = text(row, "user_id")
        o.bundleID = text(row, "bundle_id")
        o.productID = text(row, "product_id")
        o.quantity = try integer(row, "quantity")
        if let milli = try integer(row, "price_milli") {
            o.price = milli
        } else if let price = text(row, "price") {
            guard let milli = Money.milliunits(fromDecimal: price) else {
                throw RecordError("price: expected a decimal like 0.99, found \"\(price.prefix(40))\"")
            }
            o.price = milli
        }
        o.currency = text(row, "currency")?.uppercased()
        o.storefront = text(row, "storefront")?.uppercased()
        o.userCountry = text(row, "user_country")?.uppercased()
        o.createdAt = try time(row, "created_at")
        o.status = text(row, "status")
        o.transactionID = text(row, "transaction_id")
        o.appAccountToken = text(row, "app_account_token")?.lowercased()
        o.applicationUsername = text(row, "application_username")
        o.environment = text(row, "environment").map { AppleEnvironment(appleValue: $0)?.rawValue ?? $0 }
        return o
    }

    /// Maps one credit row.
    public static func credit(_ row: [String: String]) throws -> Credit {
        try rejectNUL(row, fields: creditFields)
        guard let id = text(row, "credit_id") else { throw RecordError("credit_id: missing") }
        var c = Credit(creditID: id)
        c.transactionID = text(row, "transaction_id")
        c.orderID = text(row, "order_id")
        c.userID = text(row, "user_id")
        c.productID = text(row, "product_id")
        c.units = try integer(row, "units")
        c.creditedAt = try time(row, "credited_at")
        c.reversedAt = try time(row, "reversed_at")
        c.reversalReason = text(row, "reversal_reason")
        c.consumedUnits = try integer(row, "consumed_units")
        c.consumedAt = try time(row, "consumed_at")
        if let consumed = c.consumedUnits, consumed < 0 {
            throw RecordError("consumed_units: \(consumed) is negative")
        }
        if c.consumedUnits != nil, c.consumedAt == nil {
            throw RecordError("consumed_at: missing (required with consumed_units: when was the spend observed?)")
        }
        return c
    }

    /// Flattens a JSON object into field → text for the given fields; nested objects, arrays and booleans
    /// in those fields are errors.
    public static func textRow(_ object: JSONObject, fields: [String]) throws -> [String: String] {
        var row: [String: String] = [:]
        for field in fields {
            if let value = try object.string(field) { row[field] = value }
        }
        return row
    }
}
