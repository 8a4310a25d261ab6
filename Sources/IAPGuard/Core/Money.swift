/// Exact conversions between decimal text and integer milliunits.
public enum Money {
    /// `a + b`, held at the bounds of `Int64` instead of trapping: amounts and units come from input.
    public static func saturatingSum(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }

    /// `value` rounded to the nearest whole number, or `nil` when it is not finite or outside `Int64` (an
    /// absurd price, quantity or rate from input): such a figure is left out, never trapped on.
    public static func rounded(_ value: Double) -> Int64? {
        Int64(exactly: value.rounded())
    }

    /// Parses a decimal amount (`"0.99"`, `"12"`, `"-1.5"`, `"1234.567"`) into milliunits without floating
    /// point. More than three decimals, or anything else, returns `nil`.
    public static func milliunits(fromDecimal text: String) -> Int64? {
        // ASCII text (nearly every amount) is read from its bytes; the rest goes through the Unicode rules.
        var text = text
        if let ascii = text.withUTF8({ asciiMilliunits($0) }) { return ascii }
        return unicodeMilliunits(fromDecimal: text)
    }

    /// What an ASCII amount reads as (`.some(nil)` when it is no amount); nil when `bytes` are not all
    /// ASCII. The rules of ``unicodeMilliunits(fromDecimal:)``, whose only ASCII whitespace is space and tab.
    static func asciiMilliunits(_ bytes: UnsafeBufferPointer<UInt8>) -> Int64?? {
        guard !bytes.contains(where: { $0 >= 0x80 }) else { return nil }
        var start = bytes.startIndex
        var end = bytes.endIndex
        func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
        while start < end, isSpace(bytes[start]) { start += 1 }
        while end > start, isSpace(bytes[end - 1]) { end -= 1 }
        var negative = false
        if start < end, bytes[start] == UInt8(ascii: "-") || bytes[start] == UInt8(ascii: "+") {
            negative = bytes[start] == UInt8(ascii: "-")
            start += 1
        }
        var whole: Int64 = 0
        var wholeDigits = 0
        var index = start
        while index < end, bytes[index] != UInt8(ascii: ".") {
            let byte = bytes[index]
            guard byte >= 0x30, byte <= 0x39 else { return .some(nil) }
            let (times, overflow) = whole.multipliedReportingOverflow(by: 10)
            let (sum, sumOverflow) = times.addingReportingOverflow(Int64(byte - 0x30))
            guard !overflow, !sumOverflow else { return .some(nil) }
            whole = sum
            wholeDigits += 1
            index += 1
        }
        var fraction: Int64 = 0
        var fractionDigits = 0
        let hasPoint = index < end
        if hasPoint {
            index += 1
            while index < end {
                let byte = bytes[index]
                guard byte >= 0x30, byte <= 0x39, fractionDigits < 3 else { return .some(nil) }
                fraction = fraction * 10 + Int64(byte - 0x30)
                fractionDigits += 1
                index += 1
            }
        }
        guard wholeDigits > 0 || hasPoint, wholeDigits > 0 || fractionDigits > 0 else { return .some(nil) }
        for _ in fractionDigits..<3 { fraction *= 10 }
        let (product, overflow) = whole.multipliedReportingOverflow(by: 1000)
        let (value, sumOverflow) = product.addingReportingOverflow(fraction)
        guard !overflow, !sumOverflow else { return .some(nil) }
        return negative ? -value : value
    }

    /// ``milliunits(fromDecimal:)`` by Unicode characters: whitespace trimmed as `CharacterSet.whitespaces`.
    static func unicodeMilliunits(fromDecimal text: String) -> Int64? {
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
