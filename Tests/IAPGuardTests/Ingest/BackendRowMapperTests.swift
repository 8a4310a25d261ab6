import Foundation
import Testing

@testable import IAPGuard

/// Orders and credits from JSON Lines are mapped straight from the parsed object; CSV and SQL rows go
/// through a field → text dictionary. Both must give the same record or the same error.
@Suite struct BackendRowMapperTests {
    /// The field lists are part of the data contract (docs/data-contract.md): order and names are pinned.
    @Test func fieldListsAreTheDocumentedOnes() {
        #expect(
            BackendRowMapper.orderFields == [
                "order_id", "user_id", "bundle_id", "product_id", "quantity", "price", "price_milli", "currency",
                "storefront", "user_country", "created_at", "status", "transaction_id", "app_account_token",
                "application_username", "environment",
            ])
        #expect(
            BackendRowMapper.creditFields == [
                "credit_id", "transaction_id", "order_id", "user_id", "product_id", "units", "credited_at",
                "reversed_at", "reversal_reason", "consumed_units", "consumed_at",
            ])
    }

    @Test func anOrderObjectIsMappedFieldByField() throws {
        let object = try JSONObject.parse(
            Array(
                #"{"order_id":" o-1 ","user_id":"u1","product_id":"gems","quantity":2,"price":"1.99","currency":"eur","created_at":1767225600000,"app_account_token":"ABC","environment":"Sandbox","extra":{"x":1}}"#
                    .utf8))
        let order = try BackendRowMapper.order(object)
        #expect(order.orderID == "o-1")
        #expect(order.userID == "u1" && order.productID == "gems" && order.quantity == 2)
        #expect(order.price == 1_990 && order.currency == "EUR")
        #expect(order.createdAt == 1_767_225_600_000 && order.appAccountToken == "abc")
        #expect(order.environment == AppleEnvironment(appleValue: "Sandbox")?.rawValue)
    }

    /// A time past the year 9999 (`9223372036854775807`, a sentinel or garbage) is the record's error, named by
    /// field: it never reaches the report, whose dates it would overflow.
    @Test func aTimeAfterTheYear9999IsTheRecordsErrorNamingTheField() throws {
        let credit =
            #"{"credit_id":"c","transaction_id":"1","user_id":"u","units":5,"credited_at":9223372036854775807}"#
        #expect {
            try BackendRowMapper.credit(JSONObject.parse(Array(credit.utf8)))
        } throws: { "\($0)".contains("credited_at: 9223372036854775807 is after the year 9999") }
        let order = #"{"order_id":"o","user_id":"u","created_at":"253402300800000"}"#
        #expect {
            try BackendRowMapper.order(JSONObject.parse(Array(order.utf8)))
        } throws: { "\($0)".contains("created_at: 253402300800000 is after the year 9999") }
        let last = #"{"order_id":"o","user_id":"u","created_at":253402300799999}"#
        #expect(try BackendRowMapper.order(JSONObject.parse(Array(last.utf8))).createdAt == 253_402_300_799_999)
    }

    @Test func aZeroPaddedAppleTransactionIdIsTheTransactionAppleNamesButOtherIdsKeepTheirZeros() throws {
        let credit = try BackendRowMapper.credit(
            JSONObject.parse(
                Array(
                    #"{"credit_id":"007","transaction_id":"00002016000000000002","order_id":"0042","user_id":"0u","units":5,"credited_at":1}"#
                        .utf8)))
        #expect(credit.transactionID == "2016000000000002")
        #expect(credit.creditID == "007" && credit.orderID == "0042" && credit.userID == "0u")
        let order = try BackendRowMapper.order(
            JSONObject.parse(
                Array(#"{"order_id":"o","user_id":"u","created_at":1,"transaction_id":" 0001 "}"#.utf8)))
        #expect(order.transactionID == "1")
        #expect(AppleTransaction.unpaddedID("000") == "0")
        #expect(AppleTransaction.unpaddedID("0a1") == "0a1")
        #expect(AppleTransaction.unpaddedID("0") == "0")
    }

    @Test func objectPathErrorsNameTheFieldAtFault() throws {
        let cases: [(String, String)] = [
            (#"{"credit_id":"c","user_id":"u","credited_at":1,"units":"ten"}"#, "units: expected a whole number"),
            (#"{"credit_id":"c","user_id":"a\u0000b"}"#, "user_id: contains a NUL character"),
            (#"{"units":1}"#, "credit_id: missing"),
            (#"{"credit_id":"c","units":[1]}"#, "units: expected text"),
            (
                #"{"credit_id":"c","user_id":"u","units":1,"credited_at":"yesterday"}"#,
                "credited_at: expected epoch milliseconds"
            ),
            (#"{"credit_id":"c","units":1,"credited_at":1}"#, "user_id: missing"),
            (#"{"credit_id":"c","user_id":"u","units":0,"credited_at":1}"#, "units: 0 grants nothing"),
            (
                #"{"credit_id":"c","user_id":"u","units":-5,"credited_at":1}"#,
                "units: -5 is a clawback without transaction_id or order_id"
            ),
            (#"{"credit_id":"c","user_id":"u","credited_at":1}"#, "units: missing"),
            (#"{"credit_id":"c","user_id":"u","units":1}"#, "credited_at: missing"),
            (
                #"{"credit_id":"c","transaction_id":2.000001e15}"#,
                "transaction_id: the JSON number 2.000001e15 is not an id"
            ),
            (#"{"credit_id":"2.000001E+15"}"#, #"credit_id: "2.000001E+15" is a number as a spreadsheet shows it"#),
        ]
        for (json, expected) in cases {
            let object = try JSONObject.parse(Array(json.utf8))
            guard case .error(let message) = Self.outcome({ try BackendRowMapper.credit(object) }) else {
                Issue.record("\(json): no error")
                continue
            }
            #expect(message.hasPrefix(expected), "\(json): \(message)")
        }
    }

    /// Generated rows (random field subsets, padding, blanks, numbers, NULs, wrong types, unknown fields):
    /// the object path gives exactly what the dictionary path gives for the same fields' text.
    @Test func objectPathAgreesWithTheTextRowPathOnGeneratedRows() throws {
        var random = SplitMix(seed: 0x1A_9A_4D)  // CrashSafetyTests' generator
        let values: [String] = [
            #""x-1""#, #"" padded ""#, #""""#, #""  ""#, "42", "-7", "1.5", "1e3", "null", "true", "[1]", #"{"a":1}"#,
            #""2026-01-02T03:04:05Z""#, "1767225600000", #""1767225600000""#, #""12abc""#, #""a\u0000b""#,
            #""0.99""#, #""EUR""#, #""Production""#, #""sandbox""#, #""Ünïcode ✓""#, "9007199254740993",
        ]
        let names = BackendRowMapper.orderFields + BackendRowMapper.creditFields + ["unknown", "note"]
        var compared = 0
        for _ in 0..<3_000 {
            var members: [String] = []
            for name in names where random.next() % 3 == 0 {
                members.append("\"\(name)\":\(values[Int(random.next() % UInt64(values.count))])")
            }
            if random.next() % 2 == 0 { members.append(#""order_id":"o""#) }
            if random.next() % 2 == 0 { members.append(#""credit_id":"c""#) }
            let json = "{" + members.joined(separator: ",") + "}"
            let object = try JSONObject.parse(Array(json.utf8))
            #expect(
                Self.outcome { try BackendRowMapper.order(object) }
                    == Self.outcome { try BackendRowMapper.order(Self.textRow(object, BackendRowMapper.orderFields)) },
                "\(json)")
            #expect(
                Self.outcome { try BackendRowMapper.credit(object) }
                    == Self.outcome {
                        try BackendRowMapper.credit(Self.textRow(object, BackendRowMapper.creditFields))
                    },
                "\(json)")
            compared += 1
        }
        #expect(compared == 3_000)
    }

    /// The oracle: the fields' text read one by one into a dictionary (what CSV and SQL rows are); the
    /// first field of the wrong type throws, and so does an id given as a JSON number that may have lost
    /// digits (only JSON has numbers).
    static func textRow(_ object: JSONObject, _ fields: [String]) throws -> [String: String] {
        var row: [String: String] = [:]
        for field in fields {
            if ["order_id", "user_id", "transaction_id", "credit_id"].contains(field),
                let problem = object.idNumberProblem(field)
            {
                throw RecordError(problem)
            }
            if let value = try object.string(field) { row[field] = value }
        }
        return row
    }

    static func outcome<T: Equatable>(_ body: () throws -> T) -> Outcome<T> {
        do {
            return .value(try body())
        } catch {
            return .error("\(error)")
        }
    }

    enum Outcome<T: Equatable>: Equatable {
        case value(T)
        case error(String)
    }
}
