/// Why one input record could not be used. Carries enough to name the field at fault.
public struct RecordError: Error, Sendable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
