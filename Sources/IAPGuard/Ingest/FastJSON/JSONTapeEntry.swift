/// One value of a parsed ``JSONDocument``, in document order (a container is followed by its members).
///
/// 16 bytes, no references: a document is two flat arrays (its bytes and its tape), whatever its size.
struct JSONTapeEntry: Sendable, Equatable {
    enum Kind: UInt8, Sendable {
        case object
        case array
        /// A string without escapes: its bytes are the text.
        case string
        /// A string with at least one `\` escape (already validated).
        case escapedString
        /// A number written as an integer that fits in `Int64` (``payload`` holds it).
        case integer
        /// Any other number (fraction, exponent or out of `Int64`), finite as a `Double`.
        case number
        case `true`
        case `false`
        case null
    }

    var kind: Kind
    /// Strings: offset of the first byte after the opening quote. Numbers: offset of the first byte.
    /// Containers: how many members (object pairs or array items).
    var start: UInt32
    /// Strings: offset of the closing quote. Numbers: offset after the last byte. Containers: the tape
    /// index just after the container's last entry. Integers: the value's bit pattern.
    var payload: UInt64

    /// The integer of an ``Kind/integer`` entry.
    var integer: Int64 { Int64(bitPattern: payload) }

    /// The byte range of a string's content or a number's text.
    var byteRange: Range<Int> { Int(start)..<Int(payload) }

    /// The tape index of the next sibling of the entry at `index`.
    func next(after index: Int) -> Int {
        switch kind {
        case .object, .array: return Int(payload)
        default: return index + 1
        }
    }
}
