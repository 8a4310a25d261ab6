import Foundation

/// A value computed on a thread of its own while the caller goes on; ``get()`` waits for it.
///
/// For the few places where two independent pieces of one stage can use both cores (the report's HTML
/// rendered beside its CSV files).
final class BackgroundResult<Value: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<Value, any Error>?

    /// Starts `body` on a new thread.
    init(name: String, _ body: @escaping @Sendable () throws -> Value) {
        let thread = Thread { [self] in
            let outcome = Result { try body() }
            condition.lock()
            result = outcome
            condition.broadcast()
            condition.unlock()
        }
        thread.name = name
        thread.start()
    }

    /// Waits for the value, or rethrows what `body` threw.
    func get() throws -> Value {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let result { return try result.get() }
            condition.wait()
        }
    }
}
