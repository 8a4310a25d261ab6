import Foundation
import Testing

@testable import IAPGuard

@Suite struct CompactJWSTests {
    @Test func appleSampleTransactionSplitsIntoHeaderPayloadAndThreeCertificates() throws {
        let text = try String(contentsOf: Fixtures.local("apple/signed/transactionInfo"), encoding: .utf8)
        let jws = try CompactJWS(text)
        #expect(jws.algorithm == "ES256")
        #expect(jws.certificateChainDER.count == 3)
        #expect(jws.signature.count == 64)
    }

    @Test func twoPartTextIsRejectedAsBadFormat() {
        #expect(throws: CompactJWS.FormatError.self) { try CompactJWS("abc.def") }
    }

    @Test func nonBase64URLHeaderIsRejected() {
        #expect(throws: CompactJWS.FormatError.self) { try CompactJWS("a+b.eyJ9.c") }
    }
}
