import Foundation
import Testing

@testable import IAPGuard

#if canImport(Glibc)
    import Glibc
#endif

/// A loopback HTTP listener on plain sockets: answers each request with `status` (or never, when
/// `answers` is false) and records the request lines and bodies.
final class HealthcheckListener: @unchecked Sendable {
    let port: UInt16
    private let socketFD: Int32
    private let log = RequestLog()

    final class RequestLog: @unchecked Sendable {
        private let lock = NSLock()
        private var requests: [String] = []
        func append(_ line: String) { lock.withLock { requests.append(line) } }
        var all: [String] { lock.withLock { requests } }
    }

    init(status: Int = 200, answers: Bool = true) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0, listen(fd, 8) == 0 else {
            close(fd)
            throw PipelineTestFailure("cannot listen on loopback")
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        socketFD = fd
        let log = self.log
        Thread.detachNewThread {
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 { return }
                var data = [UInt8]()
                var buffer = [UInt8](repeating: 0, count: 4096)
                while !Self.complete(data) {
                    let n = read(client, &buffer, buffer.count)
                    if n <= 0 { break }
                    data += buffer[0..<n]
                }
                let text = String(decoding: data, as: UTF8.self)
                let parts = text.components(separatedBy: "\r\n\r\n")
                log.append((text.components(separatedBy: "\r\n").first ?? "") + " | " + parts.dropFirst().joined())
                if answers {
                    let reply = "HTTP/1.1 \(status) X\r\nContent-Length: 2\r\nConnection: close\r\n\r\nOK"
                    _ = reply.withCString { write(client, $0, strlen($0)) }
                    close(client)
                } else {
                    sleep(5)
                    close(client)
                }
            }
        }
    }

    static func complete(_ data: [UInt8]) -> Bool {
        let text = String(decoding: data, as: UTF8.self)
        guard let headerEnd = text.range(of: "\r\n\r\n") else { return false }
        let header = text[..<headerEnd.lowerBound].lowercased()
        guard let line = header.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
            let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else { return true }
        return text.utf8.count - text[..<headerEnd.upperBound].utf8.count >= length
    }

    var seen: [String] { log.all }

    deinit {
        shutdown(socketFD, Int32(SHUT_RDWR))
        close(socketFD)
    }
}

@Suite(.serialized) struct HealthcheckPingerTests {
    @Test func pingsStartSuccessAndFailureURLsWithTheSummaryAsBody() throws {
        let server = try HealthcheckListener()
        let base = try #require(URL(string: "http://127.0.0.1:\(server.port)/ping/abc"))
        let pinger = HealthcheckPinger(url: base, timeout: 5)
        #expect(pinger.ping(.start) == nil)
        #expect(pinger.ping(.success, body: "run 1 ok") == nil)
        #expect(pinger.ping(.failure, body: "run 2 failed") == nil)
        let seen = server.seen
        #expect(seen.count == 3)
        #expect(seen.first?.hasPrefix("POST /ping/abc/start HTTP/1.1") == true)
        #expect(seen.contains("POST /ping/abc HTTP/1.1 | run 1 ok"))
        #expect(seen.contains("POST /ping/abc/fail HTTP/1.1 | run 2 failed"))
    }

    /// The ping URL's path (a UUID or key) works as a password: what the log gets keeps only the host.
    @Test func theLoggedAddressNeverHoldsThePingKey() throws {
        let key = "5f1c2d3e-0000-4abc-9def-1234567890ab"
        let pinger = HealthcheckPinger(
            url: try #require(URL(string: "https://hc-ping.example:8443/\(key)")), timeout: 5)
        for event in [HealthcheckPinger.Event.start, .success, .failure] {
            let logged = pinger.loggableTarget(event)
            #expect(!logged.contains(key))
            #expect(logged.hasPrefix("https://hc-ping.example:8443/…"))
        }
        #expect(pinger.loggableTarget(.failure).hasSuffix("/fail"))
    }

    @Test func errorsAndSilenceAreReportedWithinTheTimeout() throws {
        let failing = try HealthcheckListener(status: 500)
        let url = try #require(URL(string: "http://127.0.0.1:\(failing.port)/x"))
        #expect(HealthcheckPinger(url: url, timeout: 5).ping(.success) == "HTTP 500")

        let silent = try HealthcheckListener(answers: false)
        let slowURL = try #require(URL(string: "http://127.0.0.1:\(silent.port)/x"))
        let start = Date()
        let problem = HealthcheckPinger(url: slowURL, timeout: 1).ping(.start)
        #expect(problem != nil)
        // Loose bound: a loaded CI machine fires timers late; the listener itself never answers.
        #expect(Date().timeIntervalSince(start) < 10)
    }
}
