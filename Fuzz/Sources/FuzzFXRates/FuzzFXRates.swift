import Foundation
import FuzzSupport
import IAPGuard

/// libFuzzer entry: the input is an FX rate file (`date,currency,per_eur`). Only ``SourceError`` may come out.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzFXRates(_ data: UnsafeRawPointer, _ size: Int) -> CInt {
    let url = FuzzHarness.scratch(UnsafeRawBufferPointer(start: data, count: size), name: "fx-rates.csv")
    do {
        let rates = try FXRateFile.load(url, source: "fuzz")
        precondition(rates.allSatisfy { $0.perEUR > 0 })
    } catch is SourceError {
    } catch {
        fatalError("FXRateFile.load threw \(type(of: error)), not SourceError: \(error)")
    }
    return 0
}
