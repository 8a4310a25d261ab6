import Foundation
import Testing

@testable import IAPGuard

/// Reading the lines of an `iapguard verify` input file.
@Suite struct SignedRecordTests {
    typealias World = VerifyTestWorld

    @Test func blankLinesAreSkipped() {
        #expect(SignedRecord(line: "") == nil)
        #expect(SignedRecord(line: "   \t") == nil)
    }

    @Test func surroundingWhitespaceIsTrimmedAndAPlainLineReadAsItIs() throws {
        let compact = try World.good.sign(payload: World.transaction())
        let verifier = try World.verifier()
        let plain = try #require(SignedRecord(line: Substring(compact)))
        for padded in [" \(compact)\t", "\u{00A0}\(compact)\r", "\n\(compact)\u{3000}"] {
            let record = try #require(SignedRecord(line: Substring(padded)))
            #expect(record.kind == plain.kind)
            #expect(verifier.verify(record).outcome == .verified, "\(padded.unicodeScalars.first?.value ?? 0)")
        }
        #expect(verifier.verify(plain).outcome == .verified)
    }

    @Test func bareJWSKindIsInferredFromThePayload() throws {
        let transaction = try #require(SignedRecord(line: Substring(try World.good.sign(payload: World.transaction()))))
        #expect(transaction.kind == .transaction)
        let renewal = try #require(SignedRecord(line: Substring(try World.good.sign(payload: World.renewal()))))
        #expect(renewal.kind == .renewalInfo)
        let notification = try #require(
            SignedRecord(line: Substring(try World.good.sign(payload: World.notification()))))
        #expect(notification.kind == .notification)
    }

    @Test func jsonObjectsNameTheirKind() throws {
        let compact = try World.good.sign(payload: World.renewal())
        let asNotification = try #require(SignedRecord(line: Substring("{\"signedPayload\":\"\(compact)\"}")))
        #expect(asNotification.kind == .notification)
        let asTransaction = try #require(SignedRecord(line: Substring("{\"signedTransactionInfo\":\"\(compact)\"}")))
        #expect(asTransaction.kind == .transaction)
    }

    @Test(arguments: ["garbage", "{\"other\":1}", "{not json", "{\"signedPayload\":\"a.b\"}"])
    func unusableLinesAreBadFormat(line: String) throws {
        let record = try #require(SignedRecord(line: Substring(line)))
        guard case .invalid(let outcome) = record.content else {
            Issue.record("expected invalid, got \(record.content)")
            return
        }
        #expect(outcome.reason == VerificationFailure.badFormat.rawValue)
        #expect(outcome.detail?.isEmpty == false)
    }
}
