import Foundation

/// Counts the HTTP attempts sent through it (for the pull summary).
final class CountingHTTPClient: HTTPClient, @unchecked Sendable {
    private let base: any HTTPClient
    // Guarded by `lock`.
    private let lock = NSLock()
    private var sent = 0

    init(_ base: any HTTPClient) { self.base = base }

    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return sent
    }

    func send(_ request: HTTPRequest, timeout: TimeInterval) throws -> HTTPResponse {
        lock.lock()
        sent += 1
        lock.unlock()
        return try base.send(request, timeout: timeout)
    }
}
