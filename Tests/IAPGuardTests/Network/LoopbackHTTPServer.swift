import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A tiny HTTP/1.1 server on 127.0.0.1 (an ephemeral port) for network tests: one thread per connection,
/// one request per connection (`Connection: close`) or, with `keepAlive`, requests served on a connection
/// until the client closes it (as Apple's servers do, so a client may reuse it), and a handler that decides
/// what to send — a normal response, a truncated body, a delay, or a dropped connection.
final class LoopbackHTTPServer: @unchecked Sendable {
    struct Request: Sendable {
        var method: String
        var path: String
        var query: [String: String]
        var headers: [String: String]
        var body: Data
    }

    enum Reply: Sendable {
        case respond(status: Int, headers: [String: String], body: Data)
        /// Declares `Content-Length` of the whole body but sends only `sent` bytes, then closes.
        case truncated(status: Int, body: Data, sent: Int)
        /// Waits, then replies.
        case delayed(TimeInterval, status: Int, body: Data)
        /// Closes the connection without a response.
        case drop

        static func json(_ status: Int, _ text: String, headers: [String: String] = [:]) -> Reply {
            .respond(
                status: status, headers: headers.merging(["Content-Type": "application/json"]) { a, _ in a },
                body: Data(text.utf8))
        }
    }

    let port: UInt16
    private let listener: Int32
    private let handler: @Sendable (Request) -> Reply
    private let lock = NSLock()
    private var stopped = false
    private var requestLog: [Request] = []

    let keepAlive: Bool
    /// Bytes written the moment a connection is accepted, before any request is read (a server that does not
    /// speak what the client expects, such as plain text to a TLS client).
    let banner: Data?

    init(
        keepAlive: Bool = false, banner: Data? = nil, handler: @escaping @Sendable (Request) -> Reply
    ) throws {
        self.handler = handler
        self.keepAlive = keepAlive
        self.banner = banner
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw ServerError("socket failed") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            close(fd)
            throw ServerError("bind/listen failed")
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: actual.sin_port)
        listener = fd
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    deinit { stop() }

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Requests received so far.
    var requests: [Request] {
        lock.lock()
        defer { lock.unlock() }
        return requestLog
    }

    func stop() {
        lock.lock()
        let wasStopped = stopped
        stopped = true
        lock.unlock()
        if !wasStopped {
            shutdown(listener, Int32(SHUT_RDWR))
            close(listener)
        }
    }

    private var isStopped: Bool {
        lock.lock()
        defer { lock.unlock() }
        return stopped
    }

    private func acceptLoop() {
        while !isStopped {
            let client = accept(listener, nil, nil)
            if client < 0 {
                if isStopped { return }
                continue
            }
            let thread = Thread { [self] in serve(client) }
            thread.start()
        }
    }

    private func serve(_ fd: Int32) {
        defer { close(fd) }
        if let banner { write(fd, banner) }
        // At most 1000 requests per connection (a bound for the loop; clients open a new one after).
        for _ in 0..<(keepAlive ? 1000 : 1) {
            guard let request = readRequest(fd) else { return }
            lock.lock()
            requestLog.append(request)
            lock.unlock()
            switch handler(request) {
            case .respond(let status, let headers, let body):
                write(fd, head(status, headers, length: body.count) + body)
            case .truncated(let status, let body, let sent):
                write(fd, head(status, ["Content-Type": "application/json"], length: body.count) + body.prefix(sent))
                return
            case .delayed(let seconds, let status, let body):
                Thread.sleep(forTimeInterval: seconds)
                write(fd, head(status, ["Content-Type": "application/json"], length: body.count) + body)
            case .drop:
                return
            }
            if isStopped { return }
        }
        shutdown(fd, Int32(SHUT_WR))
    }

    private func head(_ status: Int, _ headers: [String: String], length: Int) -> Data {
        var text = "HTTP/1.1 \(status) \(status == 200 ? "OK" : "Status")\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
        text += "Content-Length: \(length)\r\nConnection: \(keepAlive ? "keep-alive" : "close")\r\n\r\n"
        return Data(text.utf8)
    }

    private func write(_ fd: Int32, _ data: Data) {
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                #if canImport(Glibc)
                    let n = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                #else
                    let n = send(fd, raw.baseAddress! + offset, raw.count - offset, 0)
                #endif
                if n <= 0 { return }
                offset += n
            }
        }
    }

    private func readRequest(_ fd: Int32) -> Request? {
        var buffer = [UInt8]()
        var chunk = [UInt8](repeating: 0, count: 65536)
        let separator: [UInt8] = [13, 10, 13, 10]
        var headerEnd: Int?
        while headerEnd == nil {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { return nil }
            buffer += chunk[0..<n]
            if buffer.count >= 4 {
                for i in 0...(buffer.count - 4) where Array(buffer[i..<(i + 4)]) == separator {
                    headerEnd = i
                    break
                }
            }
            if buffer.count > 1 << 20 { return nil }
        }
        guard let end = headerEnd else { return nil }
        let headText = String(decoding: buffer[0..<end], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count >= 2 else { return nil }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        var body = Array(buffer[(end + 4)...])
        while body.count < length {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n <= 0 { break }
            body += chunk[0..<n]
        }
        let target = String(requestLine[1])
        let parts = target.split(separator: "?", maxSplits: 1)
        var query: [String: String] = [:]
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1)
                let key = String(kv[0]).removingPercentEncoding ?? String(kv[0])
                let value = kv.count > 1 ? (String(kv[1]).removingPercentEncoding ?? String(kv[1])) : ""
                query[key] = value
            }
        }
        return Request(
            method: String(requestLine[0]), path: String(parts[0]).removingPercentEncoding ?? String(parts[0]),
            query: query, headers: headers, body: Data(body.prefix(length)))
    }

    struct ServerError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
