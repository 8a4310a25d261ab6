import Foundation

/// The time a line of a generated world's input happened at, for splitting the world at its last day: the
/// signed date inside a JWS line (signed transactions, notifications), otherwise the latest of the record's
/// own times (a receipt's `received_at`, a credit's `credited_at` or `reversed_at`, a CSV row's time column).
/// Read straight from the bytes without a JSON parse: the split reads gigabytes. Nil when the line has none
/// (a malformed line the world plants), which keeps the line in the base.
enum RecordTime {
    /// The JSON members holding a JWS whose payload's `signedDate` dates the line.
    static let jwsKeys = ["signedTransactionInfo", "signedPayload", "signedRenewalInfo"].map {
        Array("\"\($0)\":\"".utf8)
    }
    /// The JSON members and CSV columns holding a record's own epoch-millisecond times.
    static let timeNames = ["received_at", "credited_at", "reversed_at", "created_at", "updated_at"]
    private static let timeKeys = timeNames.map { Array("\"\($0)\":".utf8) }
    private static let signedDateKey = Array("\"signedDate\":".utf8)

    /// A JSON Lines record's time.
    static func json(_ line: ArraySlice<UInt8>) -> Int64? {
        for key in jwsKeys {
            guard let start = find(key, in: line) else { continue }
            guard let end = line[start...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
            return jwsSignedDate(line[start..<end])
        }
        var latest: Int64?
        for key in timeKeys {
            guard let start = find(key, in: line), let value = number(in: line[start...]) else { continue }
            latest = max(latest ?? value, value)
        }
        return latest
    }

    /// The columns of a CSV header that hold times (by ``timeNames``).
    static func timeColumns(header: ArraySlice<UInt8>) -> [Int] {
        fields(header).enumerated().compactMap { index, field in
            timeNames.contains(String(decoding: field, as: UTF8.self)) ? index : nil
        }
    }

    /// A CSV row's time: the latest of its time columns.
    static func csv(_ line: ArraySlice<UInt8>, columns: [Int]) -> Int64? {
        let values = fields(line)
        var latest: Int64?
        for column in columns where column < values.count {
            guard let value = number(in: values[column][...]) else { continue }
            latest = max(latest ?? value, value)
        }
        return latest
    }

    /// The `signedDate` of a compact JWS's payload (base64url, the second of three parts).
    static func jwsSignedDate(_ jws: ArraySlice<UInt8>) -> Int64? {
        let parts = jws.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var text = String(decoding: parts[1], as: UTF8.self)
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.utf8.count % 4) % 4)
        guard let payload = Data(base64Encoded: text) else { return nil }
        let bytes = [UInt8](payload)[...]
        guard let start = find(signedDateKey, in: bytes) else { return nil }
        return number(in: bytes[start...])
    }

    /// The index just past the first occurrence of `key` in `bytes`.
    private static func find(_ key: [UInt8], in bytes: ArraySlice<UInt8>) -> Int? {
        guard let first = key.first, bytes.count >= key.count else { return nil }
        var index = bytes.startIndex
        let last = bytes.endIndex - key.count
        while index <= last {
            if bytes[index] == first, bytes[index..<(index + key.count)].elementsEqual(key) {
                return index + key.count
            }
            index += 1
        }
        return nil
    }

    /// The decimal integer at the start of `bytes`, after spaces and an optional quote.
    private static func number(in bytes: ArraySlice<UInt8>) -> Int64? {
        var index = bytes.startIndex
        while index < bytes.endIndex, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\"") {
            index += 1
        }
        var value: Int64 = 0
        var digits = 0
        while index < bytes.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]), digits < 18 {
            value = value * 10 + Int64(bytes[index] - UInt8(ascii: "0"))
            digits += 1
            index += 1
        }
        return digits > 0 ? value : nil
    }

    /// The fields of a CSV line (RFC 4180 quoting; a `\r` before the line break dropped).
    private static func fields(_ line: ArraySlice<UInt8>) -> [[UInt8]] {
        var result: [[UInt8]] = []
        var field: [UInt8] = []
        var quoted = false
        var index = line.startIndex
        while index < line.endIndex {
            let byte = line[index]
            if quoted {
                if byte == UInt8(ascii: "\"") {
                    if index + 1 < line.endIndex, line[index + 1] == UInt8(ascii: "\"") {
                        field.append(byte)
                        index += 1
                    } else {
                        quoted = false
                    }
                } else {
                    field.append(byte)
                }
            } else if byte == UInt8(ascii: "\"") {
                quoted = true
            } else if byte == UInt8(ascii: ",") {
                result.append(field)
                field = []
            } else if byte != UInt8(ascii: "\r") {
                field.append(byte)
            }
            index += 1
        }
        result.append(field)
        return result
    }
}
