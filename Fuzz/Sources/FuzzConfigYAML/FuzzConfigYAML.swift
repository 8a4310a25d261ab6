import Foundation
import FuzzSupport
import IAPGuard

/// libFuzzer entry: the input is a config file. Only ``ConfigError`` may come out.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfigYAML(_ data: UnsafeRawPointer, _ size: Int) -> CInt {
    let url = FuzzHarness.scratch(UnsafeRawBufferPointer(start: data, count: size), name: "iapguard.yml")
    do {
        let config = try Config.load(from: url)
        _ = config.referenceData
    } catch is ConfigError {
    } catch {
        fatalError("Config.load threw \(type(of: error)), not ConfigError: \(error)")
    }
    return 0
}
