import Foundation
import Testing

@testable import IAPGuard

/// `JSONObject.isNull` (a metatype check, no bridging) agrees with `is NSNull` on what JSONSerialization makes.
@Suite struct JSONNullCheckTests {
    @Test func nullCheckAgreesWithTheBridgingCheck() throws {
        let json = #"{"n":null,"o":{"a":null},"a":[null,1],"s":"x","i":1,"b":true,"d":1.5,"e":{},"l":[]}"#
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        var values: [Any] = Array(object.values)
        values += (object["a"] as? [Any]) ?? []
        values += Array(((object["o"] as? [String: Any]) ?? [:]).values)
        for value in values {
            #expect(JSONObject.isNull(value) == (value is NSNull), "\(value)")
        }
        #expect(values.filter { JSONObject.isNull($0) }.count == 3)
    }
}
