import FuzzSupport

/// libFuzzer entry: the input is a receipts JSON Lines file (legacy `verifyReceipt` responses).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzReceiptLine(_ data: UnsafeRawPointer, _ size: Int) -> CInt {
    FuzzHarness.ingest(UnsafeRawBufferPointer(start: data, count: size), kind: "receipts", format: "jsonl")
    return 0
}
