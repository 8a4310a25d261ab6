/// Maps the backend's rows (from CSV, JSON Lines or a SQL query, all seen as field name → text) onto
/// ``BackendOrder`` and ``Credit``, with errors that name the field.
///
/// A row is first read into the values of the fields the record can carry, in a fixed order
/// (``orderFields``, ``creditFields``); the mapping then reads them by position. A JSON Lines object is read
/// straight into those values, without an intermediate `[String: String]` (one dictionary per line cost
/// about as much as parsing the line).
public enum BackendRowMapper {
    /// Fields an order row may carry (anything else is ignored).
    public static let orderFields = OrderField.allCases.map(\.name)
    /// Fields a credit row may carry.
    public static let creditFields = CreditField.allCases.map(\.name)

    /// The fields of an order row, in ``orderFields`` order.
    enum OrderField: Int, CaseIterable, BackendField {
        case orderID, userID, bundleID, productID, quantity, price, priceMilli, currency, storefront, userCountry
        case createdAt, status, transactionID, appAccountToken, applicationUsername, environment

        var name: String {
            switch self {
            case .orderID: "order_id"
            case .userID: "user_id"
            case .bundleID: "bundle_id"
            case .productID: "product_id"
            case .quantity: "quantity"
            case .price: "price"
            case .priceMilli: "price_milli"
            case .currency: "currency"
            case .storefront: "storefront"
            case .userCountry: "user_country"
            case .createdAt: "created_at"
            case .status: "status"
            case .transactionID: "transaction_id"
            case .appAccountToken: "app_account_token"
            case .applicationUsername: "application_username"
            case .environment: "environment"
            }
        }

        var isID: Bool { self == .orderID || self == .userID || self == .transactionID }
    }

    /// The fields of a credit row, in ``creditFields`` order.
    enum CreditField: Int, CaseIterable, BackendField {
        case creditID, transactionID, orderID, userID, productID, units, creditedAt, reversedAt, reversalReason
        case consumedUnits, consumedAt

        var name: String {
            switch self {
            case .creditID: "credit_id"
            case .transactionID: "transaction_id"
            case .orderID: "order_id"
            case .userID: "user_id"
            case .productID: "product_id"
            case .units: "units"
            case .creditedAt: "credited_at"
            case .reversedAt: "reversed_at"
            case .reversalReason: "reversal_reason"
            case .consumedUnits: "consumed_units"
            case .consumedAt: "consumed_at"
            }
        }

        var isID: Bool { self == .creditID || self == .transactionID || self == .orderID || self == .userID }
    }

    /// Fields an account row (`kind: users`) may carry.
    public static let userFields = UserField.allCases.map(\.name)

    /// The fields of an account row, in ``userFields`` order.
    enum UserField: Int, CaseIterable, BackendField {
        case userID, country, appAccountToken, applicationUsername, createdAt

        var name: String {
            switch self {
            case .userID: "user_id"
            case .country: "country"
            case .appAccountToken: "app_account_token"
            case .applicationUsername: "application_username"
            case .createdAt: "created_at"
            }
        }

        var isID: Bool { self == .userID }
    }

    /// Maps one account row.
    public static func user(_ row: [String: String]) throws -> UserAccount {
        try user(BackendFieldValues(row))
    }

    /// Maps one account from a JSON Lines object (nested objects, arrays and booleans in its fields are errors).
    public static func user(_ object: JSONObject) throws -> UserAccount {
        try user(BackendFieldValues(object))
    }

    static func user(_ row: BackendFieldValues<UserField>) throws -> UserAccount {
        try row.rejectNUL()
        // The same id checks as orders and credits: the ids must join.
        guard let id = try row.id(.userID) else { throw RecordError("user_id: missing") }
        var u = UserAccount(userID: id)
        u.country = try row.country(.country)
        u.appAccountToken = row.text(.appAccountToken)?.lowercased()
        u.applicationUsername = row.text(.applicationUsername)
        u.createdAt = try row.time(.createdAt)
        return u
    }

    /// Maps one order row.
    public static func order(_ row: [String: String]) throws -> BackendOrder {
        try order(BackendFieldValues(row))
    }

    /// Maps one order from a JSON Lines object (nested objects, arrays and booleans in its fields are errors).
    public static func order(_ object: JSONObject) throws -> BackendOrder {
        try order(BackendFieldValues(object))
    }

    /// Maps one credit row.
    public static func credit(_ row: [String: String]) throws -> Credit {
        try credit(BackendFieldValues(row))
    }

    /// Maps one credit from a JSON Lines object (nested objects, arrays and booleans in its fields are errors).
    public static func credit(_ object: JSONObject) throws -> Credit {
        try credit(BackendFieldValues(object))
    }

    static func order(_ row: BackendFieldValues<OrderField>) throws -> BackendOrder {
        try row.rejectNUL()
        guard let id = try row.id(.orderID) else { throw RecordError("order_id: missing") }
        var o = BackendOrder(orderID: id)
        o.userID = try row.id(.userID)
        o.bundleID = row.text(.bundleID)
        o.productID = row.text(.productID)
        o.quantity = try row.positive(.quantity)
        // What the user was asked to pay. 0 is a real price (a free trial, a free offer code), as it is in
        // Apple's own records; only a negative price is a broken export.
        if let milli = try row.price(.priceMilli) {
            o.price = milli
        } else if let price = row.text(.price) {
            guard let milli = Money.milliunits(fromDecimal: price) else {
                throw RecordError("price: expected a decimal like 0.99, found \"\(price.prefix(40))\"")
            }
            guard milli >= 0 else { throw RecordError(BackendFieldValues<OrderField>.negativePrice(.price, price)) }
            o.price = milli
        }
        o.currency = row.text(.currency)?.uppercased()
        o.storefront = try row.country(.storefront)
        o.userCountry = try row.country(.userCountry)
        guard let createdAt = try row.time(.createdAt) else {
            throw RecordError("created_at: missing (an order has a creation time)")
        }
        o.createdAt = createdAt
        o.status = row.text(.status)
        o.transactionID = try row.transactionID(.transactionID)
        o.appAccountToken = row.text(.appAccountToken)?.lowercased()
        o.applicationUsername = row.text(.applicationUsername)
        o.environment = row.text(.environment).map { AppleEnvironment(appleValue: $0)?.rawValue ?? $0 }
        return o
    }

    static func credit(_ row: BackendFieldValues<CreditField>) throws -> Credit {
        try row.rejectNUL()
        guard let id = try row.id(.creditID) else { throw RecordError("credit_id: missing") }
        var c = Credit(creditID: id)
        c.transactionID = try row.transactionID(.transactionID)
        c.orderID = try row.id(.orderID)
        guard let userID = try row.id(.userID) else {
            throw RecordError("user_id: missing (a credit needs the account that received it)")
        }
        c.userID = userID
        c.productID = row.text(.productID)
        guard let units = try row.integer(.units) else { throw RecordError("units: missing (a credit grants units)") }
        guard units != 0 else {
            throw RecordError(
                "units: 0 grants nothing (a credit grants units; a clawback takes them back with negative units)")
        }
        c.units = units
        guard let creditedAt = try row.time(.creditedAt) else {
            throw RecordError("credited_at: missing (when the credit was granted)")
        }
        c.creditedAt = creditedAt
        c.reversedAt = try row.time(.reversedAt)
        if let reversed = c.reversedAt, reversed < creditedAt {
            if creditedAt - reversed <= Credit.reversalClockSkewMillis {
                // Two servers' clocks (the grant stamped by one, its rollback by another): reversed as granted.
                c.reversedAt = creditedAt
            } else {
                // A reversal cannot precede the grant: the credit stands (the source's warning names the row).
                c.reversalBeforeGrant = reversed
                c.reversedAt = nil
            }
        }
        c.reversalReason = row.text(.reversalReason)
        c.consumedUnits = try row.integer(.consumedUnits)
        c.consumedAt = try row.time(.consumedAt)
        if let consumed = c.consumedUnits, consumed < 0 {
            throw RecordError("consumed_units: \(consumed) is negative")
        }
        if c.isClawback, c.transactionID == nil, c.orderID == nil {
            throw RecordError(
                "units: \(units) is a clawback without transaction_id or order_id (nothing says which credit it takes back)"
            )
        }
        if c.consumedUnits != nil, c.consumedAt == nil {
            throw RecordError("consumed_at: missing (required with consumed_units: when was the spend observed?)")
        }
        return c
    }
}
