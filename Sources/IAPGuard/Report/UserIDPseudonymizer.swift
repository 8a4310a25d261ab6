import Crypto
import Foundation

/// Replaces user ids by keyed hashes (`anon-` + 16 hex digits of HMAC-SHA256(key, id)) for reports that leave
/// the risk team. The same id and key always give the same pseudonym, so analysts can still group by user.
public struct UserIDPseudonymizer: Sendable {
    private let key: Data?

    /// `nil` key: ids pass through unchanged.
    public init(key: Data?) {
        self.key = key
    }

    /// Whether ids are being replaced.
    public var isActive: Bool { key != nil }

    /// The pseudonym of one id (the id itself when inactive).
    public func pseudonym(_ userID: String) -> String {
        guard let key else { return userID }
        let mac = HMAC<SHA256>.authenticationCode(for: Data(userID.utf8), using: SymmetricKey(data: key))
        let hex = Data(mac).map { byte in
            let text = String(byte, radix: 16)
            return text.count == 1 ? "0" + text : text
        }.joined()
        return "anon-" + String(hex.prefix(16))
    }

    /// Whether an evidence field holds user ids: `user_id`, `*_user_id`, `user`, `*_user`, `user_ids`,
    /// `*_user_ids`, `application_username`.
    public static func isUserField(_ name: String) -> Bool {
        let n = name.lowercased()
        return n == "user_id" || n.hasSuffix("_user_id") || n == "user" || n.hasSuffix("_user")
            || n == "user_ids" || n.hasSuffix("_user_ids") || n == "application_username" || n == "users"
    }

    /// An evidence value of a user field: each comma-separated id replaced.
    public func pseudonymField(_ value: String) -> String {
        guard isActive else { return value }
        if value.contains(",") {
            return value.split(separator: ",", omittingEmptySubsequences: false)
                .map { part -> String in
                    let trimmed = part.trimmingCharacters(in: .whitespaces)
                    return trimmed.isEmpty ? String(part) : pseudonym(trimmed)
                }
                .joined(separator: ",")
        }
        return pseudonym(value)
    }

    /// Replaces, in free text, every whole-word occurrence of a known user id (longest first, ids of at least
    /// 3 characters) by its pseudonym. A match must not touch a letter, digit, `-`, `_` or `.` on either side
    /// (a `.` after the id counts only when a word character follows it: a sentence's final period is fine).
    public func scrub(_ text: String, knownUserIDs: [String]) -> String {
        guard isActive, !knownUserIDs.isEmpty else { return text }
        let ids = Set(knownUserIDs.filter { $0.unicodeScalars.count >= 3 })
            .sorted {
                $0.unicodeScalars.count != $1.unicodeScalars.count
                    ? $0.unicodeScalars.count > $1.unicodeScalars.count : $0 < $1
            }
        var scalars = Array(text.unicodeScalars)
        for id in ids {
            let needle = Array(id.unicodeScalars)
            guard needle.count <= scalars.count else { continue }
            let replacement = Array(pseudonym(id).unicodeScalars)
            var out: [Unicode.Scalar] = []
            out.reserveCapacity(scalars.count)
            var i = 0
            while i < scalars.count {
                if i + needle.count <= scalars.count, scalars[i] == needle[0],
                    Array(scalars[i..<(i + needle.count)]) == needle,
                    i == 0 || !Self.isWordScalar(scalars[i - 1]),
                    !Self.continuesWord(scalars, at: i + needle.count)
                {
                    out.append(contentsOf: replacement)
                    i += needle.count
                } else {
                    out.append(scalars[i])
                    i += 1
                }
            }
            scalars = out
        }
        var result = ""
        result.unicodeScalars.append(contentsOf: scalars)
        return result
    }

    /// Whether the text continues the word at `index`: a word character, or a `.` followed by one
    /// (`u-1.example`), so a sentence-ending period is a boundary.
    private static func continuesWord(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
        guard index < scalars.count else { return false }
        if scalars[index] == "." {
            return index + 1 < scalars.count && isWordScalar(scalars[index + 1]) && scalars[index + 1] != "."
        }
        return isWordScalar(scalars[index])
    }

    private static func isWordScalar(_ s: Unicode.Scalar) -> Bool {
        s.properties.isAlphabetic || (s.value >= 48 && s.value <= 57) || s == "-" || s == "_" || s == "."
    }
}
