import FuzzSupport

/// libFuzzer entry: the input is a notifications JSON Lines file (`{"signedPayload": …}` per line).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNotificationLine(_ data: UnsafeRawPointer, _ size: Int) -> CInt {
    FuzzHarness.ingest(UnsafeRawBufferPointer(start: data, count: size), kind: "notifications", format: "jsonl")
    return 0
}
