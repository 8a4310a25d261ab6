import Foundation

/// Wall-clock helpers. Everything stored is epoch milliseconds UTC.
public enum Clock {
    /// Now, in epoch milliseconds.
    public static func nowMillis() -> Int64 {
        Int64((Date().timeIntervalSince1970 * 1000).rounded())
    }
}
