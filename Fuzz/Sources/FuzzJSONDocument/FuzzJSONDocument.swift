import FuzzSupport
import IAPGuard

/// libFuzzer entry: the input is one JSON text. iapguard's byte-level parser (`JSONDocument`) must not
/// crash, and must agree with `JSONSerialization` (`JSONFoundationDifferential`): accept exactly what it
/// accepts, with equal values, modulo the documented differences (UTF-16/32 input; strict mode rejects
/// trailing commas). A disagreement is a finding: it traps, so libFuzzer saves the input.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONDocument(_ data: UnsafeRawPointer, _ size: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: size))
    if let mismatch = JSONFoundationDifferential.mismatch(bytes) {
        fatalError("JSONDocument and JSONSerialization disagree: \(mismatch)")
    }
    // The typed accessors on whatever object it is must not trap either.
    if let object = try? JSONObject.parse(bytes) {
        for key in ["a", "status", "transaction_id", "in_app", "receipt", ""] {
            _ = try? object.string(key)
            _ = try? object.int64(key)
            _ = try? object.time(key)
            _ = try? object.objects(key)
            _ = try? object.object(key)
            _ = object.describedValue(key)
        }
        _ = object.values
    }
    return 0
}
