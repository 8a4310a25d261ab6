/// Exact conversions between decimal text and integer milliunits.
public enum Money {
    /// Parses a decimal amount (`"0.99"`, `"12"`, `"-1.5"`, `"1234.567"`) into milliunits without floating
    /// point. More than three decimals, or anything else, returns `nil`.
    public static func milliunits(fromDecimal text: String) -> Int64? {
        var s = Substring(text.trimmingCharacters(in: .whitespaces))
        var negative = false
        if s.first == "-" {
            negative = true
            s = s.dropFirst()
        } else if s.first == "+" {
            s = s.dropFirst()
        }
        let parts = s.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, let whole = parts.first, !whole.isEmpty || parts.count == 2,
            whole.allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        var fraction = parts.count == 2 ? String(parts[1]) : ""
        guard fraction.count <= 3, fraction.allSatisfy({ $0.isASCII && $0.isNumber }),
            !(whole.isEmpty && fraction.isEmpty)
        else { return nil }
        while fraction.count < 3 { fraction += "0" }
        guard let w = Int64(whole.isEmpty ? "0" : String(whole)), let f = Int64(fraction) else { return nil }
        let (product, overflow) = w.multipliedReportingOverflow(by: 1000)
        let (value, sumOverflow) = product.addingReportingOverflow(f)
        guard !overflow, !sumOverflow else { return nil }
        return negative ? -value : value
    }

    /// Renders milliunits as a plain decimal with the fewest decimals that are exact, at least two
    /// (`990` → `0.99`, `1000` → `1.00`, `1234` → `1.234`).
    public static func decimalText(milliunits: Int64) -> String {
        let negative = milliunits < 0
        let magnitude = milliunits.magnitude
        let whole = magnitude / 1000
        let fraction = magnitude % 1000
        var fractionText = String(fraction)
        while fractionText.count < 3 { fractionText = "0" + fractionText }
        if fractionText.hasSuffix("0") { fractionText.removeLast() }
        return (negative ? "-" : "") + "\(whole).\(fractionText)"
    }
}
