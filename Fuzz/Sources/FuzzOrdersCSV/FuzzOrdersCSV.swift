import FuzzSupport

/// libFuzzer entry: the input is an orders CSV file (CSV reader, header mapping, order row mapper); the
/// same bytes are also read as a credits JSON Lines file (JSON object → row mapper).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOrdersCSV(_ data: UnsafeRawPointer, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    FuzzHarness.ingest(bytes, kind: "orders", format: "csv")
    FuzzHarness.ingest(bytes, kind: "credits", format: "jsonl")
    return 0
}
