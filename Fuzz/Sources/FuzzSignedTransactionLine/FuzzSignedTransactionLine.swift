import FuzzSupport
import IAPGuard

/// libFuzzer entry: the input is a signed-transactions JSON Lines file (compact JWS or
/// `{"signedTransactionInfo": …}` per line), verified against the seed corpus's test root. The whole
/// input is also decoded as one compact JWS.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzSignedTransactionLine(_ data: UnsafeRawPointer, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    if let text = String(validating: bytes, as: UTF8.self), let jws = try? CompactJWS(text) {
        precondition(!jws.compact.isEmpty)
        _ = jws.signingInput
    }
    FuzzHarness.ingest(bytes, kind: "signed-transactions", format: "jsonl")
    return 0
}
