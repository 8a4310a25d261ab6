import Foundation
import Testing

@testable import IAPGuard

/// What a page of Apple's history answers must hold before the pull trusts it.
@Suite struct APIPageShapeTests {
    /// Apple always sends `hasMore`: a page without it cannot say whether more follow, and read as `false` it
    /// ended the pull early and moved its cursor past notifications it never fetched.
    @Test func aHistoryPageWithoutHasMoreIsAMalformedBody() throws {
        #expect(throws: MalformedBody.self) {
            try AppStoreServerAPIClient.transactionPage(["signedTransactions": [String](), "revision": "r1"])
        }
        #expect(throws: MalformedBody.self) {
            try AppStoreServerAPIClient.notificationPage(["notificationHistory": [Any]()])
        }
        #expect(throws: MalformedBody.self) {
            try AppStoreServerAPIClient.notificationPage(["notificationHistory": [Any](), "hasMore": NSNull()])
        }
        let last = try AppStoreServerAPIClient.transactionPage(
            ["signedTransactions": [String](), "revision": "r1", "hasMore": false])
        #expect(!last.hasMore)
        let notifications = try AppStoreServerAPIClient.notificationPage(
            ["notificationHistory": [Any](), "hasMore": false])
        #expect(!notifications.hasMore)
    }
}
