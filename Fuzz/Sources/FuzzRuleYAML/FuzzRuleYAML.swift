import Foundation
import FuzzSupport
import IAPGuard

/// libFuzzer entry: the input is one rule file, loaded as `RuleSet` does (errors are values, never thrown).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRuleYAML(_ data: UnsafeRawPointer, _ size: Int) -> CInt {
    let url = FuzzHarness.scratch(UnsafeRawBufferPointer(start: data, count: size), name: "IAP-999-fuzz.yaml")
    switch RuleSet.load(file: url) {
    case .success(let rule): precondition(!rule.id.isEmpty)
    case .failure(let error): precondition(error.line >= 0 && !error.message.isEmpty)
    }
    return 0
}
